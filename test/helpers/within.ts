/** `promise`, or a rejection naming `what` after `ms`: a test whose regression would hang fails instead. */
export async function within<T> (ms: number, promise: Promise<T>, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  try {
    return await Promise.race([promise, new Promise<never>((_resolve, reject) => { timer = setTimeout(() => { reject(new Error(`${what}: not within ${ms} ms`)) }, ms) })])
  } finally {
    clearTimeout(timer)
  }
}
