// Topology: how many serving processes share the database, a separate question from its SQL dialect (dialect.ts).
// - "single-process": one serving process owns the database (SQLite, the default; a CLI process may commit next to
//   it, see Db.externalVersion). Rate limits live in memory, every claim but this process's own is void, the one
//   process leads at once, publish reaches nobody.
// - "multi-instance": several instances may share the database (PostgreSQL, README "Running several instances").
//   Rate limits are rows every instance sees (rate-events.ts), claims name a live instance (instances.ts), one
//   instance leads (Db.elect), events cross instances (Db.publish/subscribe).
// Today the driver decides it (SqliteDb is single-process, PgDb multi-instance); code that asks "are there other
// instances?" reads `db.topology`, code that asks "which SQL?" reads `db.dialect`.
export type Topology = "single-process" | "multi-instance";
