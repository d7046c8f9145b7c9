import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { AccountSeed } from '../../example/accounts-file.js'
import type { Teardown } from './teardown.js'

/** Writes an AUTH_ACCOUNTS_FILE for the example server in a directory of the test's own, removed in teardown. */
export async function writeAccountsFile (t: Teardown, seeds: Array<AccountSeed | Record<string, unknown>>): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'fpa-accounts-'))
  t.teardown(async () => { await rm(dir, { recursive: true, force: true }) })
  const file = join(dir, 'accounts.json')
  await writeFile(file, JSON.stringify(seeds))
  return file
}
