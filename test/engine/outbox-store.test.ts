import { appendFileSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { JsonLinesOutboxStore, Outbox, type OutboxEntry } from '../../src/engine/outbox/index.js';
import { tempDir } from '../helpers/database.js';
import { RecordingMemoryPort } from './support/recording-memory-port.js';

let dir: Awaited<ReturnType<typeof tempDir>>;
let file: string;
beforeEach(async () => {
  dir = await tempDir('outbox-store');
  file = path.join(dir.dir, 'outbox.jsonl');
});
afterEach(async () => {
  await dir.remove();
});

const event = (text: string) => ({ gameId: 'g-1', roomId: 'foyer', npcId: 'npc-tobias-fenn', participantId: 'p'.repeat(43), ts: 0, text, targeted: false, anonymous: true });
const put = (id: number, text: string): OutboxEntry => ({ id, gameId: 'g-1', roomId: 'foyer', call: { name: 'ingest', events: [event(text)] }, enqueuedAtMs: 0 });

describe('the JSON-lines outbox store', () => {
  it('restores what was not settled, with its sealed batch, and ignores a torn last line', () => {
    const store = new JsonLinesOutboxStore(file);
    store.load();
    store.append({ t: 'put', entry: put(1, 'one') });
    store.append({ t: 'put', entry: put(2, 'two') });
    store.append({ t: 'put', entry: put(3, 'three') });
    store.append({ t: 'seal', batch: { ids: [1, 2], idempotencyKey: 'ob-key-one-two' } });
    store.append({ t: 'done', ids: [1, 2] });
    store.append({ t: 'seal', batch: { ids: [3], idempotencyKey: 'ob-key-three' } });
    store.close();
    appendFileSync(file, '{"t":"put","entry":{"id":4,'); // the process died mid-write
    const restored = new JsonLinesOutboxStore(file).load();
    expect(restored.pending.map((e) => e.id)).toEqual([3]);
    expect(restored.sealed).toEqual([{ ids: [3], idempotencyKey: 'ob-key-three' }]);
    // Loading rewrote the file to just that.
    expect(readFileSync(file, 'utf8').trim().split('\n')).toHaveLength(2);
  });

  it('refuses a damaged file rather than guess', () => {
    writeFileSync(file, `not json\n${JSON.stringify({ t: 'put', entry: put(1, 'one') })}\n`);
    expect(() => new JsonLinesOutboxStore(file).load()).toThrow(/line 1 is not JSON/);
  });

  it('resends a restored sealed batch under its key, and compacts as calls settle', async () => {
    const store = new JsonLinesOutboxStore(file);
    store.load();
    store.append({ t: 'put', entry: put(1, 'one') });
    store.append({ t: 'put', entry: put(2, 'two') });
    store.append({ t: 'seal', batch: { ids: [1, 2], idempotencyKey: 'ob-sealed-before-crash' } });
    store.close();
    const port = new RecordingMemoryPort();
    const outbox = new Outbox(port, { store: new JsonLinesOutboxStore(file, { compactAfterRecords: 10 }) });
    await outbox.idle();
    expect(port.calls).toEqual([{ name: 'ingest', idempotencyKey: 'ob-sealed-before-crash', events: [event('one'), event('two')] }]);
    for (let i = 0; i < 30; i += 1) outbox.ingest('g-1', 'foyer', [event(`more ${i}`)]);
    await outbox.idle();
    outbox.close();
    expect(port.boundaryEvents).toHaveLength(32);
    expect(readFileSync(file, 'utf8').trim().split('\n').length).toBeLessThan(10);
    expect(new JsonLinesOutboxStore(file).load().pending).toEqual([]);
  });
});
