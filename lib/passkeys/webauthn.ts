import type { AuthenticationResponseJSON, RegistrationResponseJSON } from '@simplewebauthn/server'

type Library = typeof import('@simplewebauthn/server')
type Helpers = typeof import('@simplewebauthn/server/helpers')

let library: Promise<[Library, Helpers]> | undefined

/**
 * @simplewebauthn/server, loaded on first use: a host with passkeys off never loads it (nor its CBOR and
 * ASN.1 parsers).
 */
async function load (): Promise<[Library, Helpers]> {
  library ??= Promise.all([import('@simplewebauthn/server'), import('@simplewebauthn/server/helpers')])
  return await library
}

/** The relying party, from the host's configuration only (never from a request's headers). */
export interface RelyingParty {
  id: string
  name: string
  origins: string[]
}

/** A verified registration: the public material to store. */
export interface VerifiedRegistration {
  id: string
  publicKey: string
  counter: number
  backupEligible: boolean
  backedUp: boolean
}

/**
 * Verifies a registration response against a challenge the caller already consumed: type
 * webauthn.create, the challenge, an origin in the list, the rpId hash, user presence and user
 * verification, ES256 or RS256. The attestation statement is checked for consistency by the library and
 * never trusted (we ask for `none`). Null when anything fails.
 */
export async function verifyRegistration (response: object, challenge: string, rp: RelyingParty): Promise<VerifiedRegistration | null> {
  const [{ verifyRegistrationResponse }, { isoBase64URL }] = await load()
  try {
    const { verified, registrationInfo } = await verifyRegistrationResponse({
      response: response as RegistrationResponseJSON,
      expectedChallenge: challenge,
      expectedOrigin: rp.origins,
      expectedRPID: rp.id,
      expectedType: 'webauthn.create',
      requireUserPresence: true,
      requireUserVerification: true,
      supportedAlgorithmIDs: [-7, -257]
    })
    if (!verified || registrationInfo === undefined) return null
    const { credential, credentialDeviceType, credentialBackedUp } = registrationInfo
    return {
      id: credential.id,
      publicKey: isoBase64URL.fromBuffer(credential.publicKey),
      counter: credential.counter,
      backupEligible: credentialDeviceType === 'multiDevice',
      backedUp: credentialBackedUp
    }
  } catch {
    return null
  }
}

/** What a verified assertion reports. */
export interface VerifiedAssertion {
  counter: number
  backedUp: boolean
}

/**
 * Verifies an authentication response with the stored public key: type webauthn.get, the challenge (when
 * `challengeOk`), an origin in the list, the rpId hash, user presence and verification, the signature.
 * The counter is left to the caller (the library would refuse every regression, synced passkeys' too):
 * it is given 0 here. Null when anything fails.
 */
export async function verifyAssertion (response: { id: string }, challenge: string, challengeOk: boolean, publicKey: string, rp: RelyingParty):
Promise<VerifiedAssertion | null> {
  const [{ verifyAuthenticationResponse }, { isoBase64URL }] = await load()
  try {
    const { verified, authenticationInfo } = await verifyAuthenticationResponse({
      response: response as AuthenticationResponseJSON,
      expectedChallenge: (received: string) => challengeOk && received === challenge,
      expectedOrigin: rp.origins,
      expectedRPID: rp.id,
      expectedType: 'webauthn.get',
      requireUserVerification: true,
      credential: { id: response.id, publicKey: isoBase64URL.toBuffer(publicKey), counter: 0 }
    })
    return verified ? { counter: authenticationInfo.newCounter, backedUp: authenticationInfo.credentialBackedUp } : null
  } catch {
    return null
  }
}

/**
 * A public key of no credential, for answering an unknown credential id with the same work as a known one:
 * a fresh P-256 key in COSE form (the library's CBOR encoder), base64url.
 */
export async function decoyPublicKey (): Promise<string> {
  const [, { isoBase64URL, isoCBOR }] = await load()
  const { generateKeyPairSync } = await import('node:crypto')
  const jwk = generateKeyPairSync('ec', { namedCurve: 'P-256' }).publicKey.export({ format: 'jwk' })
  const cose = new Map<number, number | Uint8Array>([
    [1, 2], [3, -7], [-1, 1], [-2, isoBase64URL.toBuffer(jwk.x!)], [-3, isoBase64URL.toBuffer(jwk.y!)]
  ])
  return isoBase64URL.fromBuffer(isoCBOR.encode(cose as never))
}
