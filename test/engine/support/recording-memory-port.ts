/**
 * The one stand-in the engine tests use: a MemoryPort that records every outbound call, so a
 * test can count what left the engine (and for which NPC). The tests against the real memory
 * service use `HttpMemoryPort` (test/engine/outbox-against-memory-service.test.ts).
 */
import type { BoundaryEvent } from '../../../src/boundary/events.js';
import type {
  EndGameRequest,
  FlushWorkingMemoryRequest,
  IngestRequest,
  MemoryPort,
  RegisterSecretsRequest,
} from '../../../src/engine/memory-port.js';

export type RecordedCall =
  | { name: 'ingest'; idempotencyKey: string; events: BoundaryEvent[] }
  | { name: 'flushWorkingMemory'; request: FlushWorkingMemoryRequest }
  | { name: 'registerSecrets'; request: RegisterSecretsRequest }
  | { name: 'endGame'; request: EndGameRequest };

export class RecordingMemoryPort implements MemoryPort {
  readonly calls: RecordedCall[] = [];

  async ingest(request: IngestRequest): Promise<void> {
    this.calls.push({ name: 'ingest', idempotencyKey: request.idempotencyKey, events: structuredClone([...request.events]) });
  }

  async flushWorkingMemory(request: FlushWorkingMemoryRequest): Promise<void> {
    this.calls.push({ name: 'flushWorkingMemory', request: structuredClone(request) });
  }

  async registerSecrets(request: RegisterSecretsRequest): Promise<void> {
    this.calls.push({ name: 'registerSecrets', request: structuredClone(request) });
  }

  async endGame(request: EndGameRequest): Promise<void> {
    this.calls.push({ name: 'endGame', request: structuredClone(request) });
  }

  /** Calls that concern one NPC: events routed to it, or flushes that name it. */
  callsFor(npcId: string, from = 0): RecordedCall[] {
    return this.calls.slice(from).filter((c) =>
      c.name === 'ingest'
        ? c.events.some((e) => e.npcId === npcId)
        : c.name === 'flushWorkingMemory' && c.request.npcIds.includes(npcId),
    );
  }

  /** Boundary events routed to one NPC (a backlog goes out coalesced, so count events, not calls). */
  eventsFor(npcId: string, from = 0): BoundaryEvent[] {
    return this.calls.slice(from).flatMap((c) => (c.name === 'ingest' ? c.events.filter((e) => e.npcId === npcId) : []));
  }

  get boundaryEvents(): BoundaryEvent[] {
    return this.calls.flatMap((c) => (c.name === 'ingest' ? c.events : []));
  }
}
