/**
 * Vectors of recently embedded texts, least recently used evicted first. A player's line is
 * embedded when it is ingested and asked for again, a moment later, by the context request of the
 * NPC that answers it (and by every other NPC of the room): the second time comes from here.
 * Copies go out, so a caller that changes its vector does not change the cache.
 */
export class RecentVectors {
  private readonly entries = new Map<string, Float32Array>();

  constructor(private readonly limit: number) {}

  get size(): number {
    return this.entries.size;
  }

  get(text: string): Float32Array | undefined {
    const hit = this.entries.get(text);
    if (!hit) return undefined;
    this.entries.delete(text);
    this.entries.set(text, hit);
    return hit.slice();
  }

  remember(text: string, vector: Float32Array): void {
    if (this.limit <= 0) return;
    this.entries.delete(text);
    this.entries.set(text, vector.slice());
    while (this.entries.size > this.limit) this.entries.delete(this.entries.keys().next().value!);
  }
}
