import type { FastifyServerOptions } from 'fastify'
import { passwordAuthRequestSerializer, SECRET_BODY_FIELDS, SECRET_FIELDS, SECRET_HEADERS } from './redact.js'

const CENSOR = '[Redacted]'
const ANYWHERE = new Set<string>([...SECRET_FIELDS, ...SECRET_HEADERS])
const IN_BODY = new Set<string>(SECRET_BODY_FIELDS)
/** A key a secret can sit under, as pino writes it: the one test most lines pay. */
const MENTION = new RegExp(`"(?:${[...ANYWHERE, ...IN_BODY].map((name) => name.replace(/[-]/g, '\\$&')).join('|')})"\\s*:`)

function redactValue (value: unknown, parentKey: string): unknown {
  if (Array.isArray(value)) return value.map((item) => redactValue(item, parentKey))
  if (value === null || typeof value !== 'object') return value
  // No prototype: a "__proto__" key parsed from a line stays a plain key.
  const redacted: Record<string, unknown> = Object.create(null)
  for (const [key, inner] of Object.entries(value)) {
    redacted[key] = ANYWHERE.has(key) || (parentKey === 'body' && IN_BODY.has(key)) ? CENSOR : redactValue(inner, key)
  }
  return redacted
}

/**
 * One pino log line with every secret field's value replaced by `[Redacted]`, at any depth: a line that
 * names no such field (nearly all) comes back as it is, after one regular-expression test.
 */
export function redactLogLine (line: string): string {
  if (!MENTION.test(line)) return line
  const end = line.endsWith('\n') ? '\n' : ''
  try {
    return JSON.stringify(redactValue(JSON.parse(line), '')) + end
  } catch {
    // pino writes JSON; a line that is not cannot be checked, so it is not written.
    return `{"msg":"fastify-password-auth: a log line naming a secret field was not JSON, so it was dropped"}${end}`
  }
}

type LoggerOptions = Exclude<FastifyServerOptions['logger'], boolean | undefined>

/**
 * Fastify's logger options with the plugin's redaction: pino's `hooks.streamWrite` redacts each line as it
 * is written, so a request that logs nothing pays nothing (pino's `redact` with wildcard paths cost about
 * 10 µs on every request's child logger), and the request serializer keeps `?access_token=` and the like out
 * of request lines. A host's own `streamWrite` runs first, its serializers replace the plugin's.
 *
 * ```ts
 * Fastify({ logger: passwordAuthLogger({ level: 'info' }) })
 * ```
 */
export function passwordAuthLogger<T extends LoggerOptions> (options: T = {} as T): T {
  const hostHook = options.hooks?.streamWrite
  return {
    ...options,
    hooks: { ...options.hooks, streamWrite: hostHook === undefined ? redactLogLine : (line: string) => redactLogLine(hostHook(line)) },
    serializers: { req: passwordAuthRequestSerializer, ...options.serializers }
  }
}
