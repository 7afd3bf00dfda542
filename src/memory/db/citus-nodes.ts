import pg from 'pg';

/**
 * Setting up a database on a Citus cluster (tests, benchmarks, a first deployment): Citus does not
 * create a database on its workers, so each node gets it with the citus and vector extensions, and
 * the workers are registered with the coordinator in that database. `migrate()` then applies the
 * Citus profile (citus.sql). The URLs name each node's maintenance database (e.g. `postgres`), as
 * a superuser.
 */
export async function createCitusDatabase(coordinatorUrl: string, workerUrls: readonly string[], name: string): Promise<string> {
  if (!/^[a-z_][a-z0-9_]*$/.test(name)) throw new Error(`not a plain database name: ${name}`);
  for (const url of [...workerUrls, coordinatorUrl]) {
    await onNode(url, `CREATE DATABASE ${name}`);
    await onNode(inDatabase(url, name), 'CREATE EXTENSION citus', 'CREATE EXTENSION vector');
  }
  const coordinator = new URL(coordinatorUrl);
  await onNode(
    inDatabase(coordinatorUrl, name),
    `SELECT citus_set_coordinator_host('${coordinator.hostname}', ${Number(coordinator.port)})`,
    ...workerUrls.map((w) => `SELECT citus_add_node('${new URL(w).hostname}', ${Number(new URL(w).port)})`),
  );
  return inDatabase(coordinatorUrl, name);
}

/** Drops the database on every node of the cluster. */
export async function dropCitusDatabase(coordinatorUrl: string, workerUrls: readonly string[], name: string): Promise<void> {
  for (const url of [coordinatorUrl, ...workerUrls]) await onNode(url, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
}

/** The same server's database `name`. */
export function inDatabase(url: string, name: string): string {
  const u = new URL(url);
  u.pathname = `/${name}`;
  return u.toString();
}

async function onNode(url: string, ...statements: string[]): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    for (const statement of statements) await client.query(statement);
  } finally {
    await client.end();
  }
}
