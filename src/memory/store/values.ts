/**
 * Multi-row `VALUES` lists with bound parameters. Rows are inserted as `VALUES (...), (...)`,
 * not `SELECT ... FROM unnest($n::type[], ...)`: on Citus a multi-row VALUES insert whose rows
 * carry the distribution key goes straight to its shard, while an INSERT ... SELECT over a function
 * is pulled through the coordinator and copied in, which row-level security refuses.
 */
export class Values {
  readonly params: unknown[];
  private readonly tuples: string[] = [];

  /** `params`: the statement's leading parameters ($1, $2, ...), which rows may name. */
  constructor(params: readonly unknown[] = []) {
    this.params = [...params];
  }

  /** A placeholder for one more parameter, with an optional cast (e.g. '::vector'). */
  bind(value: unknown, cast = ''): string {
    this.params.push(value);
    return `$${this.params.length}${cast}`;
  }

  /** Adds a row of SQL expressions (placeholders from `bind`, or leading ones like '$1'). */
  row(expressions: readonly string[]): void {
    this.tuples.push(`(${expressions.join(', ')})`);
  }

  get sql(): string {
    return `VALUES ${this.tuples.join(', ')}`;
  }
}
