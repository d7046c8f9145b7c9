// The kinds of value the example server reads from its environment. Each refuses a bad value with a message
// that names the variable, so a mistake stops the server before anything starts (example/config.ts).

type Env = NodeJS.ProcessEnv

export function text (env: Env, name: string): string | undefined {
  const raw = env[name]
  return raw === undefined || raw === '' ? undefined : raw
}

export function integer (env: Env, name: string, min: number, max: number): number | undefined {
  const raw = text(env, name)
  if (raw === undefined) return undefined
  const value = Number(raw)
  if (!Number.isSafeInteger(value) || value < min || value > max) {
    throw new Error(`${name} must be a whole number from ${min} to ${max}, not "${raw}"`)
  }
  return value
}

/** A number of days from 0 to `max`, fractions allowed down to one second (a test may trust a device for 2 s). */
export function days (env: Env, name: string, max: number): number | undefined {
  const raw = text(env, name)
  if (raw === undefined) return undefined
  const value = Number(raw)
  if (!/^\d+(\.\d+)?$/.test(raw.trim()) || value > max || (value > 0 && Math.round(value * 86_400) < 1)) {
    throw new Error(`${name} must be a number of days from 0 to ${max} (0.0000116 is one second), not "${raw}"`)
  }
  return value
}

export function onOff (env: Env, name: string, fallback: 'on' | 'off'): boolean {
  const value = text(env, name) ?? fallback
  if (value !== 'on' && value !== 'off') throw new Error(`${name} must be "on" or "off", not "${value}"`)
  return value === 'on'
}

export function oneOf<T extends string> (env: Env, name: string, values: readonly T[], fallback: T): T {
  const value = text(env, name) ?? fallback
  if (!values.includes(value as T)) throw new Error(`${name} must be one of ${values.join(', ')}, not "${value}"`)
  return value as T
}

/** A comma-separated list, blanks dropped. */
export function list (env: Env, name: string): string[] | undefined {
  const raw = text(env, name)
  return raw?.split(',').map((item) => item.trim()).filter((item) => item !== '')
}

/**
 * An address with one of `schemes` (e.g. ['http:', 'https:']), `example` shown when it is not one: a value
 * without its scheme ("example.com") is refused, not read as a path. No fragment; a query only for a
 * service's connection string (`query: true`, e.g. ?sslmode=require).
 */
export function url (env: Env, name: string, schemes: readonly string[], example: string, { query = false } = {}): string | undefined {
  const raw = text(env, name)
  if (raw === undefined) return undefined
  let parsed: URL | undefined
  try { parsed = new URL(raw) } catch {}
  if (parsed === undefined || !schemes.includes(parsed.protocol) || (!query && parsed.search !== '') || parsed.hash !== '' || raw.includes('#')) {
    throw new Error(`${name} must be an address starting with ${schemes.map((scheme) => `${scheme}//`).join(' or ')}, such as ${example}, not "${raw}"`)
  }
  return raw
}

/** HS256 secrets: at least 32 bytes each (the plugin's rule, said with the variable's name). */
export function secrets (name: string, values: string[]): string[] {
  for (const [i, value] of values.entries()) {
    if (Buffer.byteLength(value) < 32) {
      throw new Error(`${name}${values.length > 1 ? ` (secret ${i + 1})` : ''} must be at least 32 bytes long, e.g. $(openssl rand -base64 48)`)
    }
  }
  return values
}

const DOMAIN = /^(?=.{1,253}$)(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)*[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/

/** A relying party's id: a lower-case domain, no scheme or port (an IP address cannot be one). */
export function rpId (name: string, value: string): string {
  if (!DOMAIN.test(value) || /^[\d.]+$/.test(value)) {
    throw new Error(`${name} must be a lower-case domain without scheme or port, such as localhost or example.com (not an IP address), not "${value}"`)
  }
  return value
}

/** Exact origins on `rp` (`rpName` names its variable): https, or http on localhost, the only pages browsers let use passkeys. */
export function origins (name: string, values: string[], rp: string, rpName: string): string[] {
  if (values.length === 0) throw new Error(`${name} must list at least one origin, such as http://localhost:3000`)
  for (const value of values) {
    let parsed: URL | undefined
    try { parsed = new URL(value) } catch {}
    if (parsed?.origin !== value) throw new Error(`${name}: "${value}" is not an exact origin such as https://example.com or http://localhost:3000 (scheme, host and port; no path or trailing /)`)
    const local = parsed.hostname === 'localhost' || parsed.hostname.endsWith('.localhost')
    if (parsed.protocol !== 'https:' && !local) throw new Error(`${name}: ${value} must use https (browsers allow http for localhost only)`)
    if (parsed.hostname !== rp && !parsed.hostname.endsWith(`.${rp}`)) throw new Error(`${name}: ${value} is not on ${rpName} (${rp}) or one of its subdomains: browsers would refuse it`)
  }
  return values
}
