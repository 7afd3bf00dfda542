/* global document, location, navigator, WebSocket, RTCPeerConnection -- browser globals (this file runs in the page) */
// Optional voice between the players of one room: WebRTC, with the engine's signaling relay
// (src/voice/, GET /v1/voice) carrying only offers, answers and ICE candidates. The audio goes
// browser to browser; no NPC component is ever on this path (nothing here touches the stream).

const RTC_CONFIG = { iceServers: [] }; // same network by default; add a STUN/TURN server to go further

export async function startVoice({ token, gameId, onStatus }) {
  if (!navigator.mediaDevices?.getUserMedia || typeof RTCPeerConnection === 'undefined') {
    throw new Error('This browser cannot do voice (no microphone access or WebRTC).');
  }
  const microphone = await navigator.mediaDevices.getUserMedia({ audio: true, video: false });
  const peers = new Map();
  const audio = document.createElement('div');
  audio.hidden = true;
  document.body.append(audio);
  const socket = new WebSocket(`${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}/v1/voice`);
  const send = (message) => socket.readyState === WebSocket.OPEN && socket.send(JSON.stringify(message));
  const status = () => {
    const connected = [...peers.values()].filter((p) => p.pc.connectionState === 'connected').length;
    onStatus?.(peers.size ? `Voice on: ${connected} of ${peers.size} other player${peers.size === 1 ? '' : 's'} connected.` : 'Voice on: nobody else in this room has voice on yet.');
  };

  const peer = (peerId) => {
    let entry = peers.get(peerId);
    if (entry) return entry;
    const pc = new RTCPeerConnection(RTC_CONFIG);
    for (const track of microphone.getTracks()) pc.addTrack(track, microphone);
    const sink = document.createElement('audio');
    sink.autoplay = true;
    audio.append(sink);
    pc.addEventListener('track', (event) => (sink.srcObject = event.streams[0]));
    pc.addEventListener('connectionstatechange', status);
    pc.addEventListener('icecandidate', (event) => {
      if (event.candidate) send({ type: 'signal', to: peerId, signal: { candidate: event.candidate.toJSON() } });
    });
    entry = { pc, sink };
    peers.set(peerId, entry);
    status();
    return entry;
  };
  const drop = (peerId) => {
    const entry = peers.get(peerId);
    if (!entry) return;
    entry.pc.close();
    entry.sink.remove();
    peers.delete(peerId);
    status();
  };

  socket.addEventListener('open', () => send({ type: 'hello', token, gameId }));
  socket.addEventListener('message', async (event) => {
    const message = JSON.parse(event.data);
    if (message.type === 'welcome') {
      // The newcomer calls everyone already in the room.
      for (const peerId of message.peers) {
        const { pc } = peer(peerId);
        await pc.setLocalDescription(await pc.createOffer());
        send({ type: 'signal', to: peerId, signal: { description: { type: pc.localDescription.type, sdp: pc.localDescription.sdp } } });
      }
      status();
    } else if (message.type === 'peer-left') {
      drop(message.peerId);
    } else if (message.type === 'signal') {
      const { pc } = peer(message.from);
      if (message.signal.description) {
        await pc.setRemoteDescription(message.signal.description);
        if (message.signal.description.type === 'offer') {
          await pc.setLocalDescription(await pc.createAnswer());
          send({ type: 'signal', to: message.from, signal: { description: { type: pc.localDescription.type, sdp: pc.localDescription.sdp } } });
        }
      } else if (message.signal.candidate) {
        await pc.addIceCandidate(message.signal.candidate).catch(() => {});
      }
    } else if (message.type === 'error') {
      onStatus?.(`Voice: ${message.message}`);
    }
  });
  socket.addEventListener('close', () => onStatus?.('Voice is off.'));

  return {
    stop() {
      socket.close();
      for (const peerId of [...peers.keys()]) drop(peerId);
      for (const track of microphone.getTracks()) track.stop();
      audio.remove();
      onStatus?.('Voice is off.');
    },
  };
}
