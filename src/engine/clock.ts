/** Time, injectable so tests can let 45 minutes pass in a line. */
export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };

/** A clock that only moves when told to; for tests and simulations. */
export class ManualClock implements Clock {
  constructor(private ms: number = Date.UTC(2026, 0, 1, 12, 0, 0)) {}

  now(): number {
    return this.ms;
  }

  advance(ms: number): void {
    if (ms < 0) throw new RangeError('A clock does not go backwards.');
    this.ms += ms;
  }
}
