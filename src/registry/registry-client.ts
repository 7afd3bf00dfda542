/**
 * How the engine talks to the name registry. The in-process client and the HTTP client
 * implement the same interface, so the embedded default and a separately deployed registry
 * behave the same (DESIGN.md section 1: the boundary is real code, not a convention).
 */
import { Type } from 'typebox';
import { Compile } from 'typebox/compile';
import {
  CHARACTER_NOT_RECOGNIZED,
  notRecognized,
  type CanonicalNpc,
  type NameQuery,
  type NameRegistry,
  type ResolveResult,
} from './name-registry.js';

export interface RegistryClient {
  /** Exact canonical name -> NPC, else `{ ok: false, code: "CHARACTER_NOT_RECOGNIZED" }`. */
  resolve(query: NameQuery): Promise<ResolveResult>;
  /** The canonical names of a registered NPC id, or undefined. */
  getNpc(npcId: string): Promise<CanonicalNpc | undefined>;
}

export class InProcessRegistryClient implements RegistryClient {
  constructor(private readonly registry: NameRegistry) {}

  async resolve(query: NameQuery): Promise<ResolveResult> {
    return this.registry.resolve(query);
  }

  async getNpc(npcId: string): Promise<CanonicalNpc | undefined> {
    return this.registry.getNpc(npcId);
  }
}

/** The registry could not answer (down, timed out, or answered something unexpected). */
export class RegistryUnavailableError extends Error {
  readonly code = 'REGISTRY_UNAVAILABLE';
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'RegistryUnavailableError';
  }
}

const CanonicalNpcBody = Compile(
  Type.Object({
    npcId: Type.String(),
    first: Type.String(),
    middle: Type.String(),
    last: Type.String(),
    fullName: Type.String(),
  }),
);

export interface HttpRegistryClientOptions {
  /** e.g. `http://127.0.0.1:4100` */
  baseUrl: string;
  /** (Default: global fetch) */
  fetch?: typeof fetch;
  /** (Default: 2000) */
  timeoutMs?: number;
}

export class HttpRegistryClient implements RegistryClient {
  readonly #fetch: typeof fetch;
  readonly #timeoutMs: number;
  readonly #baseUrl: string;

  constructor(options: HttpRegistryClientOptions) {
    this.#fetch = options.fetch ?? fetch;
    this.#timeoutMs = options.timeoutMs ?? 2000;
    this.#baseUrl = options.baseUrl.replace(/\/+$/, '');
  }

  async resolve(query: NameQuery): Promise<ResolveResult> {
    const params = new URLSearchParams(
      'fullName' in query ? { fullName: query.fullName } : { first: query.first, middle: query.middle, last: query.last },
    );
    const res = await this.#get(`/v1/names/resolve?${params.toString()}`);
    if (res.status === 404) {
      const body = (await res.json().catch(() => undefined)) as { code?: unknown } | undefined;
      if (body?.code === CHARACTER_NOT_RECOGNIZED) return notRecognized();
    }
    // A 400 means our query was not a canonical name form: the same answer as a miss.
    if (res.status === 400) return notRecognized();
    return { ok: true, npc: await this.#npcBody(res) };
  }

  async getNpc(npcId: string): Promise<CanonicalNpc | undefined> {
    const res = await this.#get(`/v1/npcs/${encodeURIComponent(npcId)}`);
    if (res.status === 404) return undefined;
    return this.#npcBody(res);
  }

  async #get(path: string): Promise<Response> {
    try {
      return await this.#fetch(`${this.#baseUrl}${path}`, { signal: AbortSignal.timeout(this.#timeoutMs) });
    } catch (cause) {
      throw new RegistryUnavailableError('The name registry did not answer; try again shortly.', { cause });
    }
  }

  async #npcBody(res: Response): Promise<CanonicalNpc> {
    const body: unknown = res.status === 200 ? await res.json().catch(() => undefined) : undefined;
    if (!CanonicalNpcBody.Check(body)) {
      throw new RegistryUnavailableError(`The name registry answered ${res.status} with an unexpected body.`);
    }
    const { npcId, first, middle, last, fullName } = body;
    return { npcId, first, middle, last, fullName };
  }
}
