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
/** Every name and label at most this long (contract §21). */
export const LABEL_LIMIT = 40
/** Descriptions of recently seen User-Agents: a session list parses the same few again and again. */
const CACHE_LIMIT = 500
const cache = new Map<string, DeviceDescription>()

/**
 * The names bowser's own lists hold. For a User-Agent it does not recognise, bowser names the browser with
 * whatever text comes before the first "/" ("routine security check, details at https://…/1.0"): such text
 * would reach the owner's mail and sessions list as a label, so only a listed name is kept.
 */
const BROWSERS: ReadonlySet<string> = new Set(Object.values(Bowser.BROWSER_MAP))
const SYSTEMS: ReadonlySet<string> = new Set(Object.values(Bowser.OS_MAP))
const TYPES: ReadonlySet<string> = new Set(Object.values(Bowser.PLATFORMS_MAP))

/** A name from `known`, at most LABEL_LIMIT characters, or `otherwise`: never text of the client's own. */
function recognised (name: string | undefined, known: ReadonlySet<string>, otherwise: string): string {
  return name !== undefined && known.has(name) ? clip(name) : otherwise
}

function clip (text: string): string {
  return text.length <= LABEL_LIMIT ? text : `${text.slice(0, LABEL_LIMIT - 1)}…`
}

/** The browser, system and kind of device a User-Agent names, parsed by bowser (MIT); "Unknown" where it names none it knows. */
export function describeDevice (userAgent: string | undefined): DeviceDescription {
  const text = String(userAgent ?? '').slice(0, USER_AGENT_LIMIT).trim()
  if (text === '') return UNKNOWN
  let described = cache.get(text)
  if (described === undefined) {
    const { browser, os, platform } = Bowser.parse(text)
    described = Object.freeze({
      browser: recognised(browser.name, BROWSERS, 'Unknown'),
      os: recognised(os.name, SYSTEMS, 'Unknown'),
      type: recognised(platform.type, TYPES, 'unknown')
    })
    if (cache.size >= CACHE_LIMIT) cache.delete(cache.keys().next().value!)
    cache.set(text, described)
  }
  return described
}

/** A label a person reads: "Chrome on macOS", "Safari on iOS", "Unknown browser"; at most LABEL_LIMIT characters. */
export function deviceLabel ({ browser, os }: DeviceDescription): string {
  const name = browser === 'Unknown' ? 'Unknown browser' : browser
  return clip(os === 'Unknown' ? name : `${name} on ${os}`)
}
