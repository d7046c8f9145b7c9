import { hashSync, verifySync } from '@node-rs/argon2'
import type { Argon2Params } from './argon2-options.js'
import { bcryptLoader, createBcryptVerifier } from './legacy/bcrypt.js'
import { verifyDjangoPbkdf2 } from './legacy/django.js'
import { verifyScrypt } from './legacy/scrypt.js'
import { HashFormatUnavailableError, type VerifyBuiltIn } from './legacy/types.js'

/** What every hashing worker is started with (structured-cloned once, never per task). */
export interface HashWorkerData {
  params: Argon2Params
  /** argon2's secret. */
  pepper: Uint8Array | undefined
  /** The module bcrypt hashes are verified with (BCRYPT_MODULE). */
  bcryptModule: string
}

/** The formats a worker verifies; a host's own formats (functions) cannot cross into a thread and run where they were given. */
export type BuiltInFormatName = 'argon2' | 'bcrypt' | 'scrypt' | 'django-pbkdf2-sha256'

export type HashTask =
  | { kind: 'hash', password: string }
  /** `passwords`: the candidates tried in turn (the password as typed, then its NFC form if that differs). */
  | { kind: 'verify', format: BuiltInFormatName, hash: string, passwords: readonly string[] }

/** `unavailable`: the format cannot be verified here (its optional package is missing), with the loader's error. */
export type VerifyResult = boolean | { unavailable: { code: string | undefined, message: string } }

export interface RunHashTask {
  (task: Extract<HashTask, { kind: 'hash' }>): string
  (task: Extract<HashTask, { kind: 'verify' }>): VerifyResult
  (task: HashTask): string | VerifyResult
}

/**
 * The work of a hashing worker: argon2id hashes with the configured costs and pepper, and verifications
 * of every built-in format, all synchronous (the thread does nothing else). Kept apart from the worker's
 * entry point so that it can be run and tested in the main thread too.
 */
export function createHashTasks ({ params, pepper, bcryptModule }: HashWorkerData): RunHashTask {
  const options = { ...params, secret: pepper }
  const verifiers: Record<BuiltInFormatName, VerifyBuiltIn> = {
    // A string argon2 itself refuses (a salt too short, say) is just a failure.
    argon2: (hash, password) => { try { return verifySync(hash, password, { secret: pepper }) } catch { return false } },
    bcrypt: createBcryptVerifier(bcryptLoader(bcryptModule)),
    scrypt: verifyScrypt,
    'django-pbkdf2-sha256': verifyDjangoPbkdf2
  }
  return function runHashTask (task: HashTask): string | VerifyResult {
    try {
      if (task.kind === 'hash') return hashSync(task.password, options)
      const verify = verifiers[task.format]
      return task.passwords.some((password) => verify(task.hash, password))
    } catch (err) {
      if (err instanceof HashFormatUnavailableError) return { unavailable: { code: err.code, message: err.message } }
      // The library's message may quote its input (a hash): only the kind of failure leaves the thread.
      const { name, code } = (err ?? {}) as { name?: unknown, code?: unknown }
      throw new Error(`${task.kind === 'hash' ? 'argon2id hashing' : `${task.format} verification`} failed (${String(name)}${typeof code === 'string' ? ` ${code}` : ''})`)
    }
  } as RunHashTask
}
