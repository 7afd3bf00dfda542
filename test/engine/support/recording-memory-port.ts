/**
 * The one stand-in the engine tests use: a MemoryPort that records every outbound call, so a
 * test can count what left the engine (and for which NPC). The real HTTP port comes later.
 */
import type { BoundaryEvent } from '../../../src/boundary/events.js';
import type {
  EndGameRequest,
  FlushWorkingMemoryRequest,
  MemoryPort,
  RegisterSecretsRequest,
} from '../../../src/engine/memory-port.js';

export type RecordedCall =
  | { name: 'ingest'; events: BoundaryEvent[] }
  | { name: 'flushWorkingMemory'; request: FlushWorkingMemoryRequest }
  | { name: 'registerSecrets'; request: RegisterSecretsRequest }
  | { name: 'endGame'; request: EndGameRequest };

export class RecordingMemoryPort implements MemoryPort {
  readonly calls: RecordedCall[] = [];

  async ingest(events: readonly BoundaryEvent[]): Promise<void> {
    this.calls.push({ name: 'ingest', events: structuredClone([...events]) });
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

  get boundaryEvents(): BoundaryEvent[] {
    return this.calls.flatMap((c) => (c.name === 'ingest' ? c.events : []));
  }
}
