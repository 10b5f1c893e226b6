/**
 * The stored part of a GET /blocklist listing, per store version (listing-cache.ts keeps it): the
 * items sorted by id and, per slice of SLICE items, one slab of their heads back to back
 * (`"<id>":{<stored fields>`, each without its closing brace), serialised once, in slices that yield
 * to the event loop. The slabs are off the V8 heap: 100,000 items are ~37 MB that the garbage
 * collector neither scans nor counts towards its heap growth.
 */
import { BlockedItem, toWire } from '../model/item';

/** Entries serialised per step of a cache build, and per stored slab. */
const SLICE = 500;

/**
 * The stored part of one store version: items sorted by id, and per slice of SLICE items one slab
 * holding their heads back to back (`"<id>":{<stored fields>`, each without its closing brace),
 * with offsets[k][j]..offsets[k][j+1] the bytes of item k*SLICE+j.
 */
export interface ListingEntries {
  items: BlockedItem[];
  slabs: Buffer[];
  offsets: Uint32Array[];
}

export interface ListingSource {
  version(): Promise<string>;
  list(): Promise<readonly BlockedItem[]>;
}

/** Serialises `list` (any order) into entries, one slice per step, `turn()` between slices. */
export async function buildEntries(list: readonly BlockedItem[], turn: () => Promise<void>): Promise<ListingEntries> {
  const items = [...list].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  const slabs: Buffer[] = [];
  const offsets: Uint32Array[] = [];
  const pages = new PageWriter();
  for (let start = 0; start < items.length; start += SLICE) {
    if (start > 0) await turn();
    const n = Math.min(SLICE, items.length - start);
    const heads: string[] = new Array<string>(n);
    const off = new Uint32Array(n + 1);
    for (let j = 0; j < n; j++) {
      const item = items[start + j];
      const wire = JSON.stringify(toWire(item));
      heads[j] = `${JSON.stringify(item.id)}:${wire.slice(0, -1)}`;
      off[j + 1] = off[j] + Buffer.byteLength(heads[j]);
    }
    slabs.push(pages.put(heads.join(''), off[n], (off[n] / n) * (items.length - start)));
    offsets.push(off);
  }
  return { items, slabs, offsets };
}

/**
 * The slabs are written into pages of up to PAGE_BYTES, not allocated one by one: glibc's malloc
 * serves a block below its mmap threshold (which rises up to 32 MB as large blocks are freed) from
 * its heap, and freed heap blocks stay in the process for reuse, so released slabs gave little
 * back; pages this large are mapped on their own and unmapped when released. A page is never larger than what is left to write, so a small listing
 * takes no more than it needs.
 */
const PAGE_BYTES = 8 * 1024 * 1024;

class PageWriter {
  private page: Buffer | undefined;
  private used = 0;

  /** `text`'s UTF-8 bytes (`bytes` long) in the current page, or in a new one sized for `remaining` bytes (an estimate, this slab's included). */
  put(text: string, bytes: number, remaining: number): Buffer {
    if (this.page === undefined || this.page.length - this.used < bytes) {
      this.page = Buffer.allocUnsafeSlow(Math.max(bytes, Math.min(PAGE_BYTES, Math.ceil(remaining * 1.05))));
      this.used = 0;
    }
    const at = this.used;
    this.page.write(text, at, 'utf8');
    this.used += bytes;
    return this.page.subarray(at, at + bytes);
  }
}

/** The head of item i (`"<id>":{<stored fields>`, no closing brace). */
export const headOf = (e: ListingEntries, i: number): Buffer => {
  const k = Math.floor(i / SLICE);
  const j = i - k * SLICE;
  const off = e.offsets[k];
  return e.slabs[k].subarray(off[j], off[j + 1]);
};

