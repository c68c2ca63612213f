export { exitOnSignals, type ShutdownLog } from './shutdown';
export { LogCapture } from './log-capture';
export { listen, type Listening } from './listen';
export { requestLogging } from './request-logging';
