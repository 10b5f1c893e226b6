/**
 * The V8 settings a sidecar process runs with, set once at start by whoever owns the process
 * (`blocklist sidecar`, and the memory benchmark's child, so that it measures the same process).
 */
import * as v8 from 'node:v8';
import { LoadedConfig } from '../config/config';

/**
 * V8 grows its heap in proportion to what is live and collects only when it is full: a bulk load of
 * 100,000 items left ~270 MB of garbage heap before a full GC ran (peak RSS 400 MB with 60 MB live).
 * optimize-for-size makes the heap grow by small steps and collect sooner (peak ~210 MB, same load
 * time here). V8 reads this flag when it sizes the heap, so it must be set at start, before the
 * store is loaded. Returns whether it was set.
 */
export function applyMemoryMode(config: LoadedConfig): boolean {
  if (!config.values['cluster.resource-blocklist.memory.optimize-for-size']) return false;
  v8.setFlagsFromString('--optimize-for-size');
  return true;
}
