import { existsSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'

// Tests run compiled from dist/test/, so paths are taken from the repository root (the nearest package.json).
function findRoot (dir: string): string {
  while (!existsSync(join(dir, 'package.json'))) {
    const parent = dirname(dir)
    if (parent === dir) throw new Error('no package.json above the tests')
    dir = parent
  }
  return dir
}

export const ROOT = findRoot(dirname(fileURLToPath(import.meta.url)))
export const ROOT_URL = pathToFileURL(`${ROOT}/`)

/** A path inside the repository. */
export function repoPath (...parts: string[]): string {
  return join(ROOT, ...parts)
}
