// When this extension's code began to load: imported first by extension.ts,
// so activate() can log how long loading it took (the [timing] lines).
export const loadStartedAt = Date.now();
