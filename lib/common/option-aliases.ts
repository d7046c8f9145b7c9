import { invalidOption } from './errors.js'
import { isObject } from './option-rules.js'

type Options = Record<string, unknown>

const isOn = (value: unknown): boolean => value !== undefined && value !== false

/** Where a flat option's value goes: `group.member`, while `on` says the group's feature is on. */
interface Place { group: string, member: string, on: (options: Options) => boolean }

/**
 * A flat option of earlier versions, which the HTTP contract (§13–§19) still names: `code` is its deprecation's
 * (numbered like Fastify's FSTDEP codes), `now` its new place as the warning names it, and `meant` what the refusal
 * suggests while none of its features is on (the message of the versions before the grouping).
 */
interface Alias { code: string, places: readonly Place[], now: string, meant: string }

const mfa = (member: string): Place => ({ group: 'mfa', member, on: (o) => isOn(o.mfa) })
const passkeys = (member: string): Place => ({ group: 'passkeys', member, on: (o) => isOn(o.passkeys) })
const PASSKEYS_MEANT = 'passkeys: { rpId, rpName, origins }'

const ALIASES: Record<string, Alias> = {
  mfaTtl: { code: 'FST_PWAUTH_DEP001', places: [mfa('ttl')], now: 'mfa: { ttl }', meant: 'mfa: true' },
  mfaStore: { code: 'FST_PWAUTH_DEP002', places: [mfa('store')], now: 'mfa: { store }', meant: 'mfa: true' },
  passkeyTtl: { code: 'FST_PWAUTH_DEP003', places: [passkeys('ttl')], now: 'passkeys: { ttl }', meant: PASSKEYS_MEANT },
  passkeyStore: { code: 'FST_PWAUTH_DEP004', places: [passkeys('store')], now: 'passkeys: { store }', meant: PASSKEYS_MEANT },
  resetTtl: {
    code: 'FST_PWAUTH_DEP005',
    places: [{ group: 'passwordReset', member: 'ttl', on: (o) => isOn(o.passwordReset) }],
    now: 'passwordReset: { ttl }',
    meant: 'passwordReset: true'
  },
  verifyTtl: {
    code: 'FST_PWAUTH_DEP006',
    places: [
      { group: 'registration', member: 'ttl', on: (o) => isOn(o.registration) },
      { group: 'account', member: 'verifyTtl', on: (o) => isObject(o.account) && o.account.emailChange === true }
    ],
    now: 'registration: { ttl } for Register\'s link and account: { verifyTtl } for ChangeEmail\'s',
    meant: 'registration: true (or account: { emailChange: true })'
  }
}

const warned = new Set<string>()

function warnOnce (name: string, { code, now }: Alias): void {
  if (warned.has(code)) return
  warned.add(code)
  process.emitWarning(`fastify-password-auth: the option ${name} is deprecated: use ${now} instead`, { type: 'DeprecationWarning', code })
}

/**
 * The options with each deprecated flat name moved into its group, as if the grouped form had been written, so the
 * group's own checks apply. A flat name never turns a feature on: given while its feature is off, it is refused as
 * it was before the grouping; given beside its grouped form, refused too. The host's object is not changed.
 */
export function applyAliases<T extends object> (options: T): T {
  let result = options as Options
  for (const [name, alias] of Object.entries(ALIASES)) {
    if (!Object.hasOwn(result, name)) continue
    const { [name]: value, ...rest } = result
    result = rest
    if (value === undefined) continue
    const both = alias.places.filter(({ group, member }) => isObject(result[group]) && result[group][member] !== undefined).map(({ group, member }) => `${group}.${member}`)
    if (both.length > 0) throw invalidOption(`${name} and ${both.join(' and ')} are both set: keep ${both.join(' and ')} (${name} is its deprecated old name)`)
    const on = alias.places.filter((place) => place.on(result))
    if (on.length === 0) throw invalidOption(`${name} is set, but nothing uses it while its feature is off: did you mean ${alias.meant}?`)
    for (const { group, member } of on) {
      const current = result[group]
      // Anything but true or an object is left for the group's own check to refuse.
      if (current === true || isObject(current)) result = { ...result, [group]: { ...current === true ? {} : current, [member]: value } }
    }
    warnOnce(name, alias)
  }
  return result as T
}
