/** The fields of a response's clientDataJSON the plugin reads itself, before the library runs. */
export interface ClientData {
  challenge: string
  /** True when the page that called WebAuthn was framed by another origin: refused (contract §18). */
  crossOrigin: boolean
}

/** Decodes clientDataJSON (base64url JSON); null when it is not that. */
export function readClientData (clientDataJSON: unknown): ClientData | null {
  if (typeof clientDataJSON !== 'string' || !/^[\w-]+={0,2}$/.test(clientDataJSON)) return null
  try {
    const data: unknown = JSON.parse(Buffer.from(clientDataJSON, 'base64url').toString('utf8'))
    if (typeof data !== 'object' || data === null) return null
    const { challenge, crossOrigin } = data as Record<string, unknown>
    return typeof challenge === 'string' ? { challenge, crossOrigin: crossOrigin === true } : null
  } catch {
    return null
  }
}
