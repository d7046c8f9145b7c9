/** The part of a tap Test the helpers need: somewhere to register clean-up. */
export interface Teardown { teardown: (fn: () => unknown) => void }
