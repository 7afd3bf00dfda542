/**
 * Voice isolation (seed 000: "the voice channel between humans has no code path to any NPC
 * component"), enforced on the import graph: every TypeScript import of src/voice/**, followed
 * transitively, must stay clear of the memory service, the boundary, the memory port, the
 * anonymization proxy and the outbound code; and no NPC or memory module may import src/voice.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(import.meta.dirname, '../..');
const rel = (file: string) => path.relative(ROOT, file).split(path.sep).join('/');

function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const full = path.join(dir, name);
    if (statSync(full).isDirectory()) return filesUnder(full);
    return /\.(ts|tsx|mts|cts)$/.test(name) && !name.endsWith('.d.ts') ? [full] : [];
  });
}

/** Every module specifier of a file: static imports and re-exports (type-only too), import(), require(). */
function specifiersOf(file: string): string[] {
  const source = readFileSync(file, 'utf8');
  const found = ts.preProcessFile(source, true, true).importedFiles.map((f) => f.fileName);
  // preProcessFile does not see require(); the voice module has no reason to use it, but look anyway.
  for (const m of source.matchAll(/\brequire\s*\(\s*['"]([^'"]+)['"]\s*\)/g)) found.push(m[1]!);
  return found;
}

/** Resolves a relative specifier the way NodeNext does for our sources (".js" names the ".ts" file). */
function resolve(from: string, specifier: string): string | undefined {
  if (!specifier.startsWith('.') && !specifier.startsWith('/')) return undefined; // a package
  const base = path.resolve(path.dirname(from), specifier);
  const candidates = [base.replace(/\.(m|c)?js$/, '.$1ts'), base, `${base}.ts`, path.join(base, 'index.ts')];
  const hit = candidates.find((c) => existsSync(c) && statSync(c).isFile());
  if (!hit) throw new Error(`${rel(from)} imports "${specifier}", which does not resolve; the walk would be incomplete.`);
  return hit;
}

/** Every source file reachable from `entries`, with one import chain that reaches it. */
function reachable(entries: string[]): Map<string, string[]> {
  const chains = new Map<string, string[]>(entries.map((e) => [e, [rel(e)]]));
  const queue = [...entries];
  while (queue.length > 0) {
    const file = queue.shift()!;
    for (const specifier of specifiersOf(file)) {
      const target = resolve(file, specifier);
      if (target && !chains.has(target)) {
        chains.set(target, [...chains.get(file)!, rel(target)]);
        queue.push(target);
      }
    }
  }
  return chains;
}

const SRC = path.join(ROOT, 'src');
const VOICE = filesUnder(path.join(SRC, 'voice'));

/** What voice must never reach: NPC and memory components, and everything that talks to the memory service. */
const FORBIDDEN_FOR_VOICE: [string, (file: string) => boolean][] = [
  ['the memory service', (f) => f.startsWith('src/memory/')],
  ['the boundary protocol', (f) => f.startsWith('src/boundary/')],
  ['the memory port', (f) => f === 'src/engine/memory-port.ts' || f === 'src/engine/http-memory-port.ts'],
  ['the anonymization proxy', (f) => f === 'src/engine/anonymization-proxy.ts'],
  ['outbound code', (f) => f.startsWith('src/engine/outbox/') || /outbound/.test(f)],
  ['the engine (games, NPCs)', (f) => f.startsWith('src/engine/')],
  ['the name registry', (f) => f.startsWith('src/registry/')],
  ['the NPC runtime', (f) => f.startsWith('src/npc/')],
];

/** NPC and memory modules: the memory service, the boundary, the NPC runtime, and the engine but its transport. */
const NPC_AND_MEMORY_MODULES = [
  ...filesUnder(path.join(SRC, 'memory')),
  ...(existsSync(path.join(SRC, 'npc')) ? filesUnder(path.join(SRC, 'npc')) : []),
  ...filesUnder(path.join(SRC, 'boundary')),
  ...filesUnder(path.join(SRC, 'engine')).filter((f) => !rel(f).startsWith('src/engine/http/')),
];

function violations(entries: string[], forbidden: [string, (file: string) => boolean][]): string[] {
  const out: string[] = [];
  for (const [file, chain] of reachable(entries)) {
    for (const [what, matches] of forbidden) if (matches(rel(file))) out.push(`reaches ${what}: ${chain.join(' -> ')}`);
  }
  return out;
}

describe('voice isolation, on the import graph', () => {
  it('walks a real module graph (the walker finds the engine\'s path to the memory port)', () => {
    const fromEngine = reachable([path.join(SRC, 'engine/engine.ts')]);
    expect([...fromEngine.keys()].map(rel)).toEqual(expect.arrayContaining(['src/engine/memory-port.ts', 'src/engine/outbox/outbox.ts', 'src/boundary/events.ts']));
    // And it would flag them: the same check, pointed at the engine, fails.
    expect(violations([path.join(SRC, 'engine/engine.ts')], FORBIDDEN_FOR_VOICE).length).toBeGreaterThan(0);
  });

  it('finds the voice module and nothing from it reaches NPC, memory or outbound code', () => {
    expect(VOICE.map(rel)).toEqual(expect.arrayContaining(['src/voice/index.ts', 'src/voice/signaling-hub.ts', 'src/voice/plugin.ts']));
    expect(violations(VOICE, FORBIDDEN_FOR_VOICE)).toEqual([]);
    // Only voice files and packages: not one file elsewhere in src.
    expect([...reachable(VOICE).keys()].map(rel).filter((f) => !f.startsWith('src/voice/'))).toEqual([]);
  });

  it('has no NPC or memory module that imports voice', () => {
    expect(NPC_AND_MEMORY_MODULES.length).toBeGreaterThan(20);
    expect(violations(NPC_AND_MEMORY_MODULES, [['src/voice', (f) => f.startsWith('src/voice/')]])).toEqual([]);
  });
});
