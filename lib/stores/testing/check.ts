export interface ContractCheck {
  name: string
  run: () => Promise<void>
}

export const sleep = async (ms: number): Promise<void> => { await new Promise((resolve) => setTimeout(resolve, ms)) }

let counter = 0
/** A namespace (table, key prefix…) no other check uses. */
export function uniqueNamespace (label: string): string {
  return `contract_${label}_${process.pid}_${Date.now().toString(36)}_${++counter}`
}
