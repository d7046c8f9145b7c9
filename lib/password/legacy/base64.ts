const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}(?:==)?|[A-Za-z0-9+/]{3}=?)?$/

/**
 * Standard base64, padded or not (PHC strings leave the padding out, Django keeps it). Null for anything
 * else: Buffer.from(text, 'base64') would skip stray characters and decode a damaged hash to something.
 */
export function decodeBase64 (text: string): Buffer | null {
  return text !== '' && BASE64.test(text) ? Buffer.from(text, 'base64') : null
}
