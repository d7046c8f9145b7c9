// neostandard (the Fastify organisation's ESLint setup) for lib, test and example: `npm run lint`.
// Kept under .ci/ so the package's top level holds only its own files.
import { readdirSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import neostandard from 'neostandard'

/**
 * lib/'s rooms as a ladder, top floor first (the code map at the top of lib/plugin.ts explains each): a room
 * imports only from the floors below its own, never from its floor or above. A new top-level folder or file
 * of lib/ must be placed here, or the lint fails. passkeys/ and account/ are placed before they exist.
 */
export const LADDER = [
  // client: the browser's side, beside the package's entry; it imports the rest for types only (see below).
  ['index', 'client'],
  ['plugin'],
  ['options'],
  ['routes'],
  // account: the account service, over everything it acts on (two factors, passkeys, messages, sessions).
  ['account'],
  ['guard', 'password', 'mfa', 'messages', 'passkeys'],
  ['throttle', 'session'],
  ['tokens', 'http'],
  ['stores'],
  ['common']
]

const LIB = fileURLToPath(new URL('../lib/', import.meta.url))
const rooms = readdirSync(LIB, { withFileTypes: true })
  .map((entry) => entry.isDirectory() ? { room: entry.name, folder: true } : { room: entry.name.replace(/\.ts$/, ''), folder: false })
/** How many folders below lib/ the deepest file is. */
const deepest = Math.max(...readdirSync(LIB, { recursive: true }).map((path) => path.split(/[\\/]/).length - 1))
const unplaced = rooms.filter(({ room }) => !LADDER.flat().includes(room))
if (unplaced.length > 0) throw new Error(`.ci/eslint.config.js: put lib/${unplaced[0].room} on the LADDER`)

const escape = (name) => name.replace(/[.*+?^${}()|[\]\\-]/g, '\\$&')

/**
 * One block per room and folder depth: from a file `depth` folders below lib/, an import of lib/<room> starts
 * with that many `../` (`./` at the top), so the rule matches exactly the rooms it means.
 */
function ladderBlocks () {
  const blocks = []
  for (const [floor, names] of LADDER.entries()) {
    const above = LADDER.slice(0, floor + 1).flat()
    for (const { room, folder } of rooms.filter(({ room }) => names.includes(room))) {
      const forbidden = above.filter((name) => name !== room)
      if (forbidden.length === 0) continue
      for (let depth = folder ? 1 : 0; depth <= (folder ? deepest : 0); depth++) {
        const up = depth === 0 ? '\\./' : `(?:\\.\\./){${depth}}`
        blocks.push({
          name: `ladder/${room}/${depth}`,
          files: [folder ? `lib/${room}/${'*/'.repeat(depth - 1)}*.ts` : `lib/${room}.ts`],
          rules: {
            'no-restricted-imports': ['error', {
              patterns: [{
                regex: `^${up}(?:${forbidden.map(escape).join('|')})(?:/|\\.js$)`,
                message: `lib/${room} is on floor ${floor} of the ladder (LADDER in .ci/eslint.config.js): it imports only from the floors below`
              }]
            }]
          }
        })
      }
    }
  }
  return blocks
}

/** lib/client runs in browsers: everything beyond its own folder (other rooms, packages) is imported for types only. */
const clientBlock = {
  name: 'client/types-only',
  files: ['lib/client/**/*.ts'],
  rules: {
    '@typescript-eslint/no-restricted-imports': ['error', {
      patterns: [{ regex: '^(?!\\./)', allowTypeImports: true, message: 'lib/client runs in browsers: import other rooms and packages with `import type` only' }]
    }]
  }
}

/**
 * The account store has two doors: stores/account-reads.ts, which every room reads it through, and account/ (the
 * account service), the only code that writes it. Beyond them and the wiring files that hand the store to them, no
 * code of lib/ names the AccountStore type or calls an account store's method on something called `accounts`.
 */
export const ACCOUNT_STORE_DOORS = ['lib/stores/**', 'lib/account/**', 'lib/plugin.ts', 'lib/options.ts', 'lib/index.ts']
const ACCOUNT_STORE_METHODS = '^(findById|findByEmail|updatePasswordHash|create|updateEmail|delete)$'
const ACCOUNT_STORE_NAMES = '^(accounts|accountStore)$'
const accountStoreMessage = 'read accounts through stores/account-reads.ts (AccountReads), write them through account/service.ts: ' +
  'only they, and the wiring files, hold the account store (ACCOUNT_STORE_DOORS in .ci/eslint.config.js)'
const accountStoreBlock = {
  name: 'account-store/doors',
  files: ['lib/**/*.ts'],
  ignores: ACCOUNT_STORE_DOORS,
  rules: {
    'no-restricted-syntax': ['error',
      { selector: "Identifier[name='AccountStore']", message: accountStoreMessage },
      {
        selector: `MemberExpression:matches([property.name=/${ACCOUNT_STORE_METHODS}/], [property.value=/${ACCOUNT_STORE_METHODS}/])` +
          `:matches([object.name=/${ACCOUNT_STORE_NAMES}/], [object.property.name=/${ACCOUNT_STORE_NAMES}/])`,
        message: accountStoreMessage
      }
    ]
  }
}

export default [...neostandard({ ts: true }), ...ladderBlocks(), clientBlock, accountStoreBlock]
