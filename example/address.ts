import { isIP } from 'node:net'

/** Hosts that `localhost` reaches: loopback addresses, and the wildcards that listen on them too. */
function reachedAsLocalhost (host: string): boolean {
  const bare = host.replace(/^\[|\]$/g, '')
  return bare === 'localhost' || bare === '0.0.0.0' || bare === '::' || bare === '::1' || bare === '127.0.0.1'
}

/**
 * The address to open the demo at: http://localhost:<port> whenever localhost reaches the server, since
 * browsers refuse passkeys on an IP address (http://127.0.0.1 cannot be a relying party); the host itself
 * otherwise.
 */
export function pageAddress (host: string, port: number): string {
  if (reachedAsLocalhost(host)) return `http://localhost:${port}`
  return `http://${isIP(host) === 6 ? `[${host}]` : host}:${port}`
}

/** A failed listen, said with the variables that chose where: HOST and PORT. */
export function listenError (err: unknown, host: string, port: number): Error {
  const { code, message } = err as NodeJS.ErrnoException
  const where = `HOST ${host}, PORT ${port}`
  if (code === 'EADDRINUSE') return new Error(`PORT ${port} is in use on HOST ${host}: stop the other server or choose another PORT (${message})`)
  if (code === 'EACCES') return new Error(`PORT ${port} needs privileges on this machine: choose a PORT from 1024 (${message})`)
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN' || code === 'EADDRNOTAVAIL') {
    return new Error(`HOST ${host} is not an address of this machine: use 127.0.0.1 (the default), 0.0.0.0 or one of its addresses (${message})`)
  }
  return new Error(`cannot listen on ${where}: ${message}`)
}
