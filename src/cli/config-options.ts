/**
 * The configuration flags every server-side command shares: `-c FILE` and Flink-style `-Dkey=value`.
 * File default: $BLOCKLIST_CONFIG_FILE, else conf/blocklist.yaml when it exists.
 */
import * as fs from 'node:fs';
import { Command } from 'commander';
import { LoadedConfig, loadConfig, parseDynamicProperties } from '../config/config';

export interface ConfigFlags {
  config?: string;
  define?: string[];
}

export function addConfigOptions(cmd: Command): Command {
  return cmd
    .option('-c, --config <file>', 'YAML config file with flat keys (default: $BLOCKLIST_CONFIG_FILE or conf/blocklist.yaml)')
    .option('-D, --define <key=value>', 'override one config key, Flink style: -Drest.port=8091 (repeatable)', (v: string, acc: string[] = []) => [...acc, v]);
}

export function resolveConfig(flags: ConfigFlags, env: NodeJS.ProcessEnv = process.env): LoadedConfig {
  let file = flags.config ?? env.BLOCKLIST_CONFIG_FILE;
  if (!file && fs.existsSync('conf/blocklist.yaml')) file = 'conf/blocklist.yaml';
  return loadConfig({ file, env, dynamic: parseDynamicProperties(flags.define ?? []) });
}
