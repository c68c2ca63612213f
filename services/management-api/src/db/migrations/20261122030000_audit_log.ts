import type { Knex } from 'knex';

/**
 * The audit trail: one row per management write, inserted in the same transaction as the write, so
 * a change and its record commit or vanish together. Rows hold public representations only, never
 * a password, a hash or an API key. `operator_id` has no foreign key on purpose: the record of what
 * an operator did must outlive the operator.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('audit_log', (t) => {
    t.bigIncrements('id').primary();
    // Milliseconds, as the API shows it: a `time` copied from a response filters exactly.
    t.timestamp('occurred_at', { useTz: true, precision: 3 }).notNullable().defaultTo(knex.fn.now());
    // Null for writes made outside HTTP, whose operator_name is 'cli' or 'bootstrap'.
    t.integer('operator_id').nullable();
    t.string('operator_name', 64).notNullable();
    t.string('action', 32).notNullable();
    t.string('target_type', 32).notNullable();
    t.string('target_id', 64).notNullable();
    t.string('target_name', 255).notNullable();
    t.text('target_uri').notNullable();
    t.jsonb('before').nullable();
    t.jsonb('after').nullable();
    // Null for writes made outside HTTP.
    t.string('request_id', 128).nullable();
  });
  // Newest first (the default order) and time ranges.
  await knex.raw('CREATE INDEX audit_log_occurred_at_idx ON audit_log (occurred_at, id)');
  // The history of one object.
  await knex.raw('CREATE INDEX audit_log_target_idx ON audit_log (target_type, target_id, occurred_at)');
  // What one operator did.
  await knex.raw('CREATE INDEX audit_log_operator_idx ON audit_log (operator_name, occurred_at)');
  // Everything one request did, from the X-Request-Id a client or a log line shows.
  await knex.raw('CREATE INDEX audit_log_request_id_idx ON audit_log (request_id)');
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('audit_log');
}
