import { MemoryBackend, MemoryStore } from '../../src/store/memory-store';
import { describeStoreConformance } from './conformance';

describeStoreConformance('memory', async () => {
  const backend = new MemoryBackend();
  return {
    open: async () => new MemoryStore({ backend }),
    writeRaw: async (id, text) => backend.writeRaw(id, text),
    cleanup: async () => undefined,
  };
});
