import { execFileSync } from 'node:child_process'
import { closeSync, mkdtempSync, openSync, read, rmSync, writeSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Teardown } from './teardown.js'

export interface LibuvHolders {
  /** True until release(). */
  readonly held: () => boolean
  /** Lets every held thread go (at once; called again, does nothing) and resolves when they are all back. */
  release: () => Promise<void>
}

/**
 * Holds `threads` threads of libuv's pool, each in a read from a FIFO that gets no data until release(): held
 * for as long as the test needs, at no CPU cost (a pbkdf2 per thread would burn a core each, and let go by
 * itself when it ends). Linux and macOS: a FIFO opened for reading and writing does not wait for a reader.
 * Released after `releaseAfterMs` whatever happens, so that work stuck behind the holders fails the test's
 * expectations instead of its timeout; and in teardown.
 */
export function holdLibuvThreads (t: Teardown, threads: number, releaseAfterMs = 20_000): LibuvHolders {
  const dir = mkdtempSync(join(tmpdir(), 'libuv-holders-'))
  const fifo = join(dir, 'fifo')
  execFileSync('mkfifo', [fifo])
  const writer = openSync(fifo, 'r+')
  const reader = openSync(fifo, 'r')
  const reads = Array.from({ length: threads }, async () => await new Promise<void>((resolve, reject) => {
    read(reader, Buffer.alloc(1), 0, 1, null, (err) => { if (err === null) resolve(); else reject(err) })
  }))
  let held = true
  const letGo = (): void => {
    if (!held) return
    held = false
    clearTimeout(timer)
    writeSync(writer, Buffer.alloc(threads))
  }
  const release = async (): Promise<void> => {
    letGo()
    await Promise.all(reads)
  }
  const timer = setTimeout(letGo, releaseAfterMs)
  t.teardown(async () => {
    await release()
    closeSync(reader)
    closeSync(writer)
    rmSync(dir, { recursive: true, force: true })
  })
  return { held: () => held, release }
}
