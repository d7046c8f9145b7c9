#!/usr/bin/env node
// npx fastify-password-auth schema <postgres|mysql|sqlite> [--accounts-table <name>]…: prints the stores' DDL.
import { run } from './command.js'

const result = run(process.argv.slice(2))
if (result.code === 0) {
  process.stdout.write(`${result.output}\n`)
} else {
  process.stderr.write(`${result.error}\n`)
  process.exitCode = result.code
}
