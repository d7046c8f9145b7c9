import { AuthError } from './errors.js'

export interface Wire {
  /** The URL of one of the plugin's routes, e.g. `Login`. */
  route: (path: string) => string
  /** fetch, with a deadline: no answer in `timeout` ms is an AuthError TIMEOUT, no answer at all NETWORK_ERROR, never a hang. */
  send: (input: RequestInfo | URL, init?: RequestInit) => Promise<Response>
}

export interface WireOptions {
  baseUrl: string
  prefix: string
  timeout: number
  fetch: typeof fetch
}

export function createWire ({ baseUrl, prefix, timeout, fetch }: WireOptions): Wire {
  const root = `${baseUrl.replace(/\/+$/, '')}${prefix.replace(/\/+$/, '')}/`
  return {
    route: (path) => root + path,
    async send (input, init = {}) {
      const deadline = new AbortController()
      const timer = setTimeout(() => { deadline.abort() }, timeout)
      const own = init.signal
      const forward = (): void => { deadline.abort(own?.reason) }
      own?.addEventListener('abort', forward)
      if (own?.aborted === true) forward()
      try {
        return await fetch(input, { ...init, signal: deadline.signal })
      } catch (err) {
        // The caller's own abort stays the caller's: its reason, not ours.
        if (own?.aborted === true) throw err
        if (deadline.signal.aborted) throw new AuthError('TIMEOUT', 0, `No answer within ${timeout} ms`, { cause: err })
        throw new AuthError('NETWORK_ERROR', 0, 'The server could not be reached', { cause: err })
      } finally {
        clearTimeout(timer)
        own?.removeEventListener('abort', forward)
      }
    }
  }
}
