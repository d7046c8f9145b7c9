import Bowser from 'bowser'

/** What a User-Agent says of the client, for people to recognise a session or a sign-in (contract §21). */
export interface DeviceDescription {
  /** The browser's name ("Chrome", "Safari"…), or "Unknown". */
  browser: string
  /** The operating system's name ("macOS", "Android"…), or "Unknown". */
  os: string
  /** "desktop", "mobile", "tablet", "tv", "bot", or "unknown". */
  type: string
}

const UNKNOWN: DeviceDescription = Object.freeze({ browser: 'Unknown', os: 'Unknown', type: 'unknown' })
/** Longer User-Agents are cut before parsing (the session store keeps 256 characters too). */
const USER_AGENT_LIMIT = 256
/** Descriptions of recently seen User-Agents: a session list parses the same few again and again. */
const CACHE_LIMIT = 500
const cache = new Map<string, DeviceDescription>()

/** The browser, system and kind of device a User-Agent names, parsed by bowser (MIT); "Unknown" where it names none. */
export function describeDevice (userAgent: string | undefined): DeviceDescription {
  const text = String(userAgent ?? '').slice(0, USER_AGENT_LIMIT).trim()
  if (text === '') return UNKNOWN
  let described = cache.get(text)
  if (described === undefined) {
    const { browser, os, platform } = Bowser.parse(text)
    described = Object.freeze({ browser: browser.name || 'Unknown', os: os.name || 'Unknown', type: platform.type || 'unknown' })
    if (cache.size >= CACHE_LIMIT) cache.delete(cache.keys().next().value!)
    cache.set(text, described)
  }
  return described
}

/** A label a person reads: "Chrome on macOS", "Safari on iOS", "Unknown browser". */
export function deviceLabel ({ browser, os }: DeviceDescription): string {
  const name = browser === 'Unknown' ? 'Unknown browser' : browser
  return os === 'Unknown' ? name : `${name} on ${os}`
}
