import t from 'tap'
import * as main from '../../lib/index.js'
import { OPTION_KEYS } from '../../lib/options.js'
import * as mysql from '../../lib/stores/mysql/index.js'
import * as postgres from '../../lib/stores/postgres/index.js'
import * as redis from '../../lib/stores/redis/index.js'
import * as schema from '../../lib/stores/schema/index.js'
import * as sqlite from '../../lib/stores/sqlite/index.js'
import * as testing from '../../lib/stores/testing/index.js'
import { buildTestApp } from '../helpers/app.js'
import { repoFile } from '../helpers/docs.js'

// The README's Options and Exports tables against the code: an option or an export missing from them (as
// passkeys, account and admin once were) fails here, and so does a name the code no longer has.

const readme = repoFile('README.md')

function section (heading: string): string {
  const start = readme.indexOf(`\n## ${heading}\n`)
  if (start === -1) throw new Error(`README.md has no section ${heading}`)
  const end = readme.indexOf('\n## ', start + 1)
  return readme.slice(start, end === -1 ? undefined : end)
}

/** The rows of the section's table, split into cells (a `\|` inside a cell is not a separator). */
function rows (text: string): string[][] {
  return text.split('\n').filter((line) => line.startsWith('| ') && !line.startsWith('|---'))
    .slice(1)
    .map((line) => line.slice(2, -2).split(/(?<!\\) \| /))
}

/**
 * The names in backticks, `Memory{Account,Session}Store` expanded to MemoryAccountStore and MemorySessionStore, and
 * `hashPassword(password, argon2?)` read as hashPassword.
 */
function names (cell: string): string[] {
  const expand = (token: string): string[] => {
    const match = /^(.*?)\{([^{}]*)\}(.*)$/.exec(token)
    return match === null ? [token] : match[2]!.split(',').flatMap((part) => expand(`${match[1]}${part}${match[3]}`))
  }
  return [...cell.matchAll(/`([^`]+)`/g)].flatMap((match) => expand(match[1]!.replace(/\(.*\)$/, '')))
}

t.test('the Options table and its code block name every option the plugin takes, and none it does not', async (t) => {
  const options = section('Options')
  const listed = new Set(rows(options).flatMap(([first]) => names(first!)))
  for (const key of OPTION_KEYS) t.ok(listed.has(key), `the table names ${key}`)
  t.same([...listed].filter((name) => !(OPTION_KEYS as readonly string[]).includes(name)), [], 'every name in the first column is an option')
  const block = /```ts\n(await app\.register\(passwordAuth, \{[\s\S]*?\n\}\))\n```/.exec(options)?.[1] ?? ''
  for (const key of OPTION_KEYS) t.match(block, new RegExp(`(^|[\\s,{])${key}\\b`), `the code block shows ${key}`)
})

t.test('the Exports table names every export of the package and its subpaths, and every member of fastify.passwordAuth', async (t) => {
  const table = rows(section('Exports'))
  const listed = new Set(table.flatMap((cells) => cells.flatMap(names)))
  const tableSql = [...listed].some((name) => name === '…TableSql')
  const tableSqlite = [...listed].some((name) => name === '…TableSqlite')
  const tableMysql = [...listed].some((name) => name === '…TableMysql')
  const modules = { 'fastify-password-auth': main, '/postgres': postgres, '/redis': redis, '/sqlite': sqlite, '/mysql': mysql, '/schema': schema, '/testing': testing }
  for (const [where, module] of Object.entries(modules)) {
    for (const name of Object.keys(module)) {
      t.ok(listed.has(name) || (tableSql && name.endsWith('TableSql')) || (tableSqlite && name.endsWith('TableSqlite')) || (tableMysql && name.endsWith('TableMysql')), `${where}: ${name} is in the table`)
    }
  }
  const { app } = await buildTestApp(t)
  const decoratorRow = table.find(([first]) => first!.includes('fastify.passwordAuth'))?.[0] ?? ''
  const members = new Set(names(decoratorRow).map((name) => name.replace(/^(fastify\.passwordAuth)?\./, '').replace(/\(\)$/, '')))
  for (const member of Object.keys(app.passwordAuth)) t.ok(members.has(member), `fastify.passwordAuth.${member} is in the table`)
})

t.test('the Stores table names every store class', async (t) => {
  const listed = new Set(rows(section('Stores')).flatMap(([first]) => names(first!)))
  const stores = [main, postgres, redis, sqlite, mysql].flatMap((module) => Object.keys(module).filter((name) => name.endsWith('Store')))
  for (const store of stores) t.ok(listed.has(store), `${store} is in the Stores table`)
})
