// Worker-thread entry of one streaming recognizer and its live sessions (online-sessions.ts), at the priority of live
// audio: decoding never holds the event loop.
import { serveLane } from '../../../lib/worker-lane.js';
import { onlineHandler } from './online-sessions.js';
import type { OnlineReply, OnlineRequest } from './online-worker-messages.js';

serveLane<OnlineRequest, OnlineReply>(onlineHandler());
