import fastifyJwt from '@fastify/jwt'
import type { FastifyInstance } from 'fastify'
import type { ResolvedKey } from './keys.js'

/** What one configured key can do, through its own @fastify/jwt registration. */
export interface KeyEngine {
  /** Undefined for a key that only verifies (a public key alone). */
  sign: ((payload: Record<string, unknown>) => string) | undefined
  /** The claims of a token that this key's checks accept; throws otherwise. */
  verify: (token: string) => Record<string, unknown>
}

export interface EngineChecks {
  issuer: string
  audience: string
  /** The `typ` header every token carries. */
  type: string
  requiredClaims: string[]
}

/** `fastify.jwt` inside the plugin's own context: one namespace per configured key. */
type Namespaces = Record<string, { sign: (payload: object) => string, verify: (token: string) => Record<string, unknown> }>

const namespaceOf = (index: number): string => `fastifyPasswordAuthKey${index}`

/**
 * Registers @fastify/jwt once per key, under a namespace, in a context of the plugin's own, and answers each
 * key's sign and verify (`fastify.jwt.<namespace>.sign / verify`, synchronous with a static key: no libuv
 * thread-pool work on the authenticated path).
 *
 * Why a context of its own, and why `jwt` is decorated there first (read in @fastify/jwt 10's index.js):
 * - Without the context, its decorators (`fastify.jwt`, `request.<namespace>JwtVerify`, …) would reach the
 *   host through fastify-plugin, and a host registering @fastify/jwt after the plugin would meet our `jwt`.
 * - With a namespace, @fastify/jwt adds itself to whatever `fastify.jwt` it finds, and decorates `jwt` and
 *   `request.user` only when there is none. A host that registered its own before the plugin would have ours
 *   written into its `fastify.jwt`; decorating `jwt` here first (Fastify refuses only a name the context
 *   itself holds, not an inherited one) keeps every namespace in our object and `request.user` untouched.
 * - Each verify is given its options at registration and called without any: that is the path on which
 *   @fastify/jwt reuses one fast-jwt verifier. Passing options per call would build a verifier per call.
 *   fast-jwt's own cache stays off (`cache` unset): access-tokens.ts keeps verified tokens in front of it.
 */
export async function registerJwtEngine (fastify: FastifyInstance, keys: readonly ResolvedKey[], checks: EngineChecks): Promise<KeyEngine[]> {
  let namespaces: Namespaces | undefined
  await fastify.register(async function passwordAuthJwt (context) {
    context.decorate('jwt', Object.create(null))
    for (const [index, key] of keys.entries()) {
      await context.register(fastifyJwt, {
        namespace: namespaceOf(index),
        decoratorName: 'fastifyPasswordAuthClaims',
        secret: key.algorithm === 'HS256' ? key.verifyingKey : { public: key.verifyingKey, private: key.signingKey },
        ...key.signingKey === undefined
          ? {}
          : { sign: { algorithm: key.algorithm, kid: key.kid, header: { alg: key.algorithm, typ: checks.type }, iss: checks.issuer, aud: checks.audience } },
        verify: {
          algorithms: [key.algorithm],
          allowedIss: checks.issuer,
          allowedAud: checks.audience,
          checkTyp: checks.type,
          requiredClaims: checks.requiredClaims
        }
      })
    }
    namespaces = context.jwt as unknown as Namespaces
  })
  return keys.map((key, index) => {
    const jwt = namespaces![namespaceOf(index)]!
    // Closures that never read `this`: handed on as they are, no wrapper on the hot path.
    return { sign: key.signingKey === undefined ? undefined : jwt.sign, verify: jwt.verify }
  })
}
