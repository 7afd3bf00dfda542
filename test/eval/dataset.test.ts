import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { loadDataset, pairingProblems, parseDataset, type Dataset } from '../../src/eval/dataset.js';

describe('the paired dataset', () => {
  it('seed-002: each tenant expects exactly what the other is forbidden', async () => {
    const { dataset, sha256 } = await loadDataset('eval/datasets/seed-002.json');
    expect(sha256).toMatch(/^[0-9a-f]{64}$/);
    expect(dataset.tenants).toHaveLength(2);
    expect(pairingProblems(dataset)).toEqual([]);
    const [ana, bruno] = dataset.tenants;
    const expected = (t: typeof ana) => new Set(t!.probes.flatMap((p) => [...(p.required ?? []), ...(p.anyOf ?? [])]));
    const forbidden = (t: typeof ana) => new Set(t!.probes.flatMap((p) => p.forbidden ?? []));
    expect(expected(ana)).toEqual(forbidden(bruno));
    expect(expected(bruno)).toEqual(forbidden(ana));
    expect(new Set(dataset.tenants.flatMap((t) => t.probes.map((p) => p.domain)))).toEqual(new Set(['color', 'allergy', 'employer']));
  });

  it('refuses a dataset whose pairs do not mirror each other', async () => {
    const good = JSON.parse(await readFile('eval/datasets/seed-002.json', 'utf8')) as Dataset;
    const broken = structuredClone(good);
    broken.tenants[1]!.probes[0]!.forbidden = ['magenta'];
    expect(pairingProblems(broken)).toEqual([expect.stringContaining("domain \"color\": ana expects [teal] but bruno forbids [magenta]")]);
    expect(() => parseDataset(JSON.stringify(broken))).toThrow(/pairing invariant/);
    const unpaired = structuredClone(good);
    unpaired.pairs = [['ana', 'ana']];
    expect(pairingProblems(unpaired).join('\n')).toMatch(/with itself|exactly one pair/);
    expect(() => parseDataset('{"name": 1}')).toThrow(/schema/);
  });
});
