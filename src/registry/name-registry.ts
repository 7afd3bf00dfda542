/**
 * The name registry (SpiralistAI.com): an immutable map from canonical full names to NPC ids.
 *
 * Lookup is exact and only exact: the three parts must be equal code unit for code unit to a
 * registered name. No case folding, trimming, Unicode normalization, prefix, fuzzy or phonetic
 * match, because a near miss that resolves to the wrong NPC routes a player's words into the
 * wrong NPC's memory (seed 000, failure mode 10). Anything else is "Character not recognized".
 */
import { readFile } from 'node:fs/promises';
import { Type, type Static } from 'typebox';
import { Compile } from 'typebox/compile';
import { ScopeId } from '../boundary/events.js';

/** One name part: no whitespace, so "first middle last" splits back into exactly one triple. */
const NamePart = Type.String({ pattern: '^\\S{1,64}$' });

export const NameEntry = Type.Object(
  { npcId: ScopeId, first: NamePart, middle: NamePart, last: NamePart },
  { additionalProperties: false },
);
export type NameEntry = Static<typeof NameEntry>;

export const NamesFile = Type.Object(
  { formatVersion: Type.Literal(1), names: Type.Array(NameEntry, { minItems: 1 }) },
  { additionalProperties: false },
);
export type NamesFile = Static<typeof NamesFile>;

const namesFileValidator = Compile(NamesFile);

/** A registered NPC as the registry returns it. */
export interface CanonicalNpc {
  readonly npcId: string;
  readonly first: string;
  readonly middle: string;
  readonly last: string;
  /** `first middle last`, joined by single spaces. */
  readonly fullName: string;
}

/** A name as a client asks for it: the three parts, or the full name as one string. */
export type NameQuery =
  | { readonly first: string; readonly middle: string; readonly last: string }
  | { readonly fullName: string };

export const CHARACTER_NOT_RECOGNIZED = 'CHARACTER_NOT_RECOGNIZED' as const;
export const CHARACTER_NOT_RECOGNIZED_MESSAGE = 'Character not recognized';

export type ResolveResult =
  | { readonly ok: true; readonly npc: CanonicalNpc }
  | {
      readonly ok: false;
      readonly code: typeof CHARACTER_NOT_RECOGNIZED;
      readonly message: typeof CHARACTER_NOT_RECOGNIZED_MESSAGE;
    };

export const notRecognized = (): ResolveResult => ({
  ok: false,
  code: CHARACTER_NOT_RECOGNIZED,
  message: CHARACTER_NOT_RECOGNIZED_MESSAGE,
});

/** A names file that cannot be loaded; `problems` name the JSON pointer of each bad field. */
export class NamesFileError extends Error {
  readonly code = 'INVALID_NAMES_FILE';
  constructor(
    readonly problems: readonly { path: string; message: string }[],
    options?: { cause?: unknown },
  ) {
    super(
      `The names file is invalid: ${problems.map((p) => `${p.path || '/'} ${p.message}`).join('; ')}`,
      options,
    );
    this.name = 'NamesFileError';
  }
}

export const DEFAULT_NAMES_FILE = new URL('./names.json', import.meta.url);

const fullNameOf = (e: { first: string; middle: string; last: string }) =>
  `${e.first} ${e.middle} ${e.last}`;

export class NameRegistry {
  readonly #byFullName: ReadonlyMap<string, CanonicalNpc>;
  readonly #byNpcId: ReadonlyMap<string, CanonicalNpc>;

  private constructor(entries: readonly CanonicalNpc[]) {
    this.#byFullName = new Map(entries.map((e) => [e.fullName, e]));
    this.#byNpcId = new Map(entries.map((e) => [e.npcId, e]));
  }

  /** Validates a parsed names file; refuses duplicates of an npc id or a full name. */
  static fromJson(json: unknown): NameRegistry {
    if (!namesFileValidator.Check(json)) {
      throw new NamesFileError(
        namesFileValidator.Errors(json).map((e) => ({ path: e.instancePath, message: e.message })),
      );
    }
    const problems: { path: string; message: string }[] = [];
    const ids = new Set<string>();
    const names = new Set<string>();
    const entries = json.names.map((e, i) => {
      const fullName = fullNameOf(e);
      if (ids.has(e.npcId)) problems.push({ path: `/names/${i}/npcId`, message: `duplicate npc id "${e.npcId}"` });
      if (names.has(fullName)) problems.push({ path: `/names/${i}`, message: `duplicate full name "${fullName}"` });
      ids.add(e.npcId);
      names.add(fullName);
      return Object.freeze({ ...e, fullName });
    });
    if (problems.length > 0) throw new NamesFileError(problems);
    return new NameRegistry(entries);
  }

  /** Reads and validates a names file (Default: `src/registry/names.json`). */
  static async load(file: string | URL = DEFAULT_NAMES_FILE): Promise<NameRegistry> {
    let json: unknown;
    try {
      json = JSON.parse(await readFile(file, 'utf8'));
    } catch (cause) {
      throw new NamesFileError([{ path: '', message: 'is not readable JSON' }], { cause });
    }
    return NameRegistry.fromJson(json);
  }

  /** Exact lookup; anything but a registered canonical name is "Character not recognized". */
  resolve(query: NameQuery): ResolveResult {
    const fullName = 'fullName' in query ? query.fullName : partsToFullName(query);
    const npc = fullName === undefined ? undefined : this.#byFullName.get(fullName);
    return npc ? { ok: true, npc } : notRecognized();
  }

  getNpc(npcId: string): CanonicalNpc | undefined {
    return this.#byNpcId.get(npcId);
  }

  get size(): number {
    return this.#byNpcId.size;
  }
}

/**
 * Parts that contain a space could otherwise join into another NPC's full name
 * ("Mara Ilse" + "" + "Quenby"); such a query is simply not a canonical name.
 */
function partsToFullName(q: { first: string; middle: string; last: string }): string | undefined {
  const parts = [q.first, q.middle, q.last];
  if (parts.some((p) => typeof p !== 'string' || !/^\S{1,64}$/.test(p))) return undefined;
  return fullNameOf(q);
}
