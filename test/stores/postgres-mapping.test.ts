import t from 'tap'
import { accountsTriggerSql, PostgresAccountStore, type PostgresAccountStoreOptions } from '../../lib/stores/postgres/index.js'
import { isIdOfType } from '../../lib/stores/postgres/account-mapping.js'

/** A pool that records the statements it is given and answers no rows. */
function recordingPool () {
  const texts: string[] = []
  return {
    texts,
    query: async ({ text }: { text: string }) => { texts.push(text); return { rows: [], rowCount: 0 } }
  }
}

const invalid: Array<[string, unknown, RegExp]> = [
  ['no options', undefined, /"pool" must be a pg Pool or Client/],
  ['a pool without query()', { pool: {} }, /"pool" must be a pg Pool or Client/],
  ['an empty table name', { table: '' }, /Invalid PostgreSQL table name: ""/],
  ['columns that are not an object', { columns: 'email' }, /"columns" must be an object of column names, got "email"/],
  ['an unknown column option', { columns: { mail: 'email' } }, /unknown column "columns.mail"; known: id, email, passwordHash, active, credentialVersion/],
  ['a prototype name as column option', { columns: { toString: 'x' } }, /unknown column "columns.toString"/],
  ['an empty column name', { columns: { email: '' } }, /"columns.email" must be a column name \(a non-empty string\), got ""/],
  ['a column name that is not a string', { columns: { id: 7 } }, /"columns.id" must be a column name \(a non-empty string\), got 7/],
  ['an unknown id type', { idType: 'int' }, /"idType" must be one of uuid, bigint, integer, text, got "int"/],
  ['an empty active condition', { activeCondition: ' ' }, /"activeCondition" must be a non-empty SQL condition, got " "/],
  ['an active condition that is not a string', { activeCondition: true }, /"activeCondition" must be a non-empty SQL condition, got true/],
  ['both an active column and a condition', { columns: { active: 'enabled' }, activeCondition: 'true' }, /give either "columns.active" \(a boolean column\) or "activeCondition" \(an SQL condition\), not both/],
  ['fields that are not an object', { fields: ['display_name'] }, /"fields" must be an object mapping your account fields to column names/],
  ['a field named like one of the plugin\'s', { fields: { email: 'contact' } }, /"fields.email" is a field of the plugin's own/],
  ['a field mapped to the hash', { fields: { passwordHash: 'pw' } }, /"fields.passwordHash" is a field of the plugin's own/],
  ['a field without a column', { fields: { displayName: null } }, /"fields.displayName" must be a column name/]
]

for (const [name, options, message] of invalid) {
  t.test(`the store refuses ${name}`, async (t) => {
    const withPool = options === undefined || (options as { pool?: unknown }).pool !== undefined ? options : { pool: recordingPool(), ...options as object }
    t.throws(() => new PostgresAccountStore(withPool as PostgresAccountStoreOptions), { name: 'TypeError', message })
  })
}

t.test('every identifier is quoted, and the statements use the mapping', async (t) => {
  const pool = recordingPool()
  const store = new PostgresAccountStore({
    pool,
    table: 'app.Users"; DROP TABLE x; --',
    idType: 'integer',
    columns: { id: 'User Id', email: 'e"mail', passwordHash: 'pw', active: 'is_active', credentialVersion: 'cv' },
    fields: { displayName: 'display name' }
  })
  await store.findByEmail('ada@example.com')
  await store.findById('12')
  await store.updatePasswordHash({ id: '12', expectedHash: 'a', newHash: 'b', advanceCredentialVersion: true })
  await store.setActive('12', false)
  await store.add({ email: 'ada@example.com', passwordHash: 'h' }, { ifAbsent: true })
  t.same(pool.texts, [
    'SELECT "User Id"::text AS "id", lower("e""mail") AS "email", COALESCE("is_active", false) AS "active", "cv" AS "credentialVersion", "display name" AS "displayName", "pw" AS "passwordHash" ' +
      'FROM "app"."Users""; DROP TABLE x; --" WHERE lower("e""mail") = $1 AND "e""mail" <> \'\'',
    'SELECT "User Id"::text AS "id", lower("e""mail") AS "email", COALESCE("is_active", false) AS "active", "cv" AS "credentialVersion", "display name" AS "displayName" ' +
      'FROM "app"."Users""; DROP TABLE x; --" WHERE "User Id" = $1::integer',
    'UPDATE "app"."Users""; DROP TABLE x; --" SET "pw" = $3, "cv" = "cv" + $4 WHERE "User Id" = $1::integer AND "pw" = $2',
    'UPDATE "app"."Users""; DROP TABLE x; --" SET "is_active" = $2::boolean, "cv" = "cv" + CASE WHEN "is_active" IS TRUE AND NOT $2::boolean THEN 1 ELSE 0 END WHERE "User Id" = $1::integer',
    'INSERT INTO "app"."Users""; DROP TABLE x; --" ("e""mail", "pw", "is_active") VALUES ($1, $2, $3) ON CONFLICT DO NOTHING RETURNING ' +
      '"User Id"::text AS "id", lower("e""mail") AS "email", COALESCE("is_active", false) AS "active", "cv" AS "credentialVersion", "display name" AS "displayName", "pw" AS "passwordHash"'
  ])
})

t.test('an active condition is used as given, in parentheses', async (t) => {
  const pool = recordingPool()
  const store = new PostgresAccountStore({ pool, activeCondition: 'deleted_at IS NULL OR restored' })
  await store.findById('6a1f3c7e-2b1d-4c5e-9f00-1234567890ab')
  t.match(pool.texts[0], 'COALESCE((deleted_at IS NULL OR restored), false) AS "active"')
})

t.test('ids of another shape than the id type never reach the database', async (t) => {
  const pool = recordingPool()
  const store = new PostgresAccountStore({ pool, idType: 'bigint' })
  for (const id of ['abc', '1.5', ' 12', '12 ', '+12', '0x1f', '1e3', '9223372036854775808', '-9223372036854775809', '', 12 as unknown as string]) {
    t.equal(await store.findById(id), null, JSON.stringify(id))
    t.equal(await store.updatePasswordHash({ id, expectedHash: 'a', newHash: 'b', advanceCredentialVersion: true }), false)
    t.equal(await store.setActive(id, false), false)
  }
  t.same(pool.texts, [], 'no query was sent')
})

t.test('the shape of each id type', async (t) => {
  t.ok(isIdOfType('6A1F3C7E-2b1d-4c5e-9f00-1234567890ab', 'uuid'))
  t.notOk(isIdOfType('6a1f3c7e2b1d4c5e9f001234567890ab', 'uuid'))
  t.notOk(isIdOfType('{6a1f3c7e-2b1d-4c5e-9f00-1234567890ab}', 'uuid'))
  t.ok(isIdOfType('9223372036854775807', 'bigint'))
  t.ok(isIdOfType('-9223372036854775808', 'bigint'))
  t.notOk(isIdOfType('9223372036854775808', 'bigint'))
  t.ok(isIdOfType('2147483647', 'integer'))
  t.ok(isIdOfType('-2147483648', 'integer'))
  t.notOk(isIdOfType('2147483648', 'integer'))
  t.notOk(isIdOfType('-2147483649', 'integer'))
  t.ok(isIdOfType('any text at all: é ✓', 'text'))
  t.ok(isIdOfType('', 'text'))
  t.notOk(isIdOfType('nul\0byte', 'text'), 'PostgreSQL text cannot hold NUL')
})

t.test('accountsTriggerSql refuses a mapping without an active column, or a name that would end its body', async (t) => {
  t.throws(() => accountsTriggerSql({ table: 'users', activeCondition: 'deleted_at IS NULL' }),
    { name: 'TypeError', message: /with an "activeCondition" there is no column a trigger could watch/ })
  t.throws(() => accountsTriggerSql({ columns: { active: 'on$trigger$off' } }), /a column name contains \$trigger\$/)
  t.throws(() => accountsTriggerSql({ columns: { active: '' } }), /"columns.active" must be a column name/)
  t.match(accountsTriggerSql({ table: 'crm.contacts', columns: { active: 'Active?' } }),
    'CREATE OR REPLACE TRIGGER "contacts_on_deactivate" BEFORE UPDATE OF "Active?" ON "crm"."contacts"\n  FOR EACH ROW EXECUTE FUNCTION "crm"."contacts_on_deactivate"();')
})
