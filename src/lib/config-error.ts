// The operator's configuration cannot work (a setting, a models directory, a data directory): the process stops with
// the message and no stack (cli/main.ts). Here rather than in config/ so that engines, which never import config/,
// can throw it too.
export class ConfigError extends Error {}
