import { createRequire } from 'node:module'

/**
 * The built-in list of commonly used and breached passwords that NIST SP 800-63B-4 asks verifiers to
 * refuse: the `passwords-common` dictionary of @zxcvbn-ts/language-common (MIT, kept by the zxcvbn-ts
 * project), about 49,000 passwords counted from Xato's corpus of 10 million leaked passwords. Every entry
 * is kept, whatever its length: a host may set `minLength` as low as 1.
 */
type CommonPackage = typeof import('@zxcvbn-ts/language-common')

/**
 * The form in which the list and a candidate are compared: NFC, then `toLowerCase()`, which is the case
 * folding (Unicode's full, locale-independent lower-casing, so `PASSWORD` and `Password` match `password`).
 */
export function foldPassword (password: string): string {
  return password.normalize('NFC').toLowerCase()
}

/** A membership test over `entries`, both sides folded by foldPassword. */
export function createCommonPasswordCheck (entries: Iterable<string>): (password: string) => boolean {
  const folded = new Set<string>()
  for (const entry of entries) folded.add(foldPassword(entry))
  return (password) => folded.has(foldPassword(password))
}

let builtIn: ((password: string) => boolean) | undefined

/**
 * The check over the built-in list, built on the first call and shared by every plugin instance after it.
 * The package is loaded only then (about 25 ms and 3–4 MiB of heap), so a host that sets
 * `passwordPolicy.common: false` never loads it. createPasswordPolicy calls this at registration.
 */
export function loadCommonPasswords (): (password: string) => boolean {
  if (builtIn === undefined) {
    const require = createRequire(import.meta.url)
    const { dictionary } = require('@zxcvbn-ts/language-common') as CommonPackage
    builtIn = createCommonPasswordCheck(dictionary['passwords-common'])
  }
  return builtIn
}

/** True when the password, NFC-normalised and case-folded, is on the built-in list. */
export function isCommonPassword (password: string): boolean {
  return loadCommonPasswords()(password)
}
