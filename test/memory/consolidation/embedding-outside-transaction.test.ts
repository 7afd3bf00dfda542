import { describe, expect, it } from 'vitest';
import { Consolidator } from '../../../src/memory/consolidation/consolidator.js';
import { harnessForTests } from '../lifecycle/support.js';

const P = 'part-wait0001';

describe('consolidation and the embedder', () => {
  const harnessOf = harnessForTests();

  it('does not hold its write transaction while the embedder works: a line ingested meanwhile is not kept waiting (PGlite has one connection)', async () => {
    const h = harnessOf();
    await h.ingest('unblocked', [{ participantId: P, text: 'I keep bees on a rooftop in Lyon' }]);
    const embedder = h.system.service.embedder;
    const original = embedder.embed.bind(embedder);
    const order: string[] = [];
    let ingest: Promise<unknown> | undefined;
    // The first time the fact's summary is embedded, a player says something else, and the
    // embedder takes half a second over the summary.
    embedder.embed = async (texts) => {
      if (!ingest && texts.some((t) => t.startsWith('You ') && t.includes('bees'))) {
        ingest = h.ingest('unblocked', [{ participantId: P, text: 'the lamp in the corner flickers' }]).then((r) => order.push(`ingest ${r.status}`));
        await new Promise((resolve) => setTimeout(resolve, 500));
      }
      return original(texts);
    };
    try {
      const report = await new Consolidator(h.system.service).consolidate({ tenantId: h.tenantId, gameId: 'unblocked', npcId: 'npc-mara' });
      order.push('consolidation');
      expect(report.written.social).toBeGreaterThan(0);
      await ingest;
    } finally {
      embedder.embed = original;
    }
    expect(ingest).toBeDefined();
    expect(order).toEqual(['ingest 200', 'consolidation']);
  });
});
