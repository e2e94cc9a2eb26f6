//! A client driver and a server driver wired together in memory, with a toy broker that
//! answers application requests one pump round late (so their responses interleave with
//! SASL responses), and a virtual clock.
#![allow(dead_code)]

use std::collections::VecDeque;
use std::sync::Arc;

use ksasl::kafka::client::{ClientConfig, ClientConnection, ClientEvent};
use ksasl::kafka::messages::{FrameDecoder, RequestPrefix};
use ksasl::kafka::server::{ServerAction, ServerConfig, ServerConnection};
use ksasl::mech::{ClientStep, HostWork, MechServerStep};
use ksasl::session::Gate;

/// The host side of asynchronous mechanisms: finishes a piece of pending work.
pub type ClientHost = Box<dyn FnMut(&HostWork) -> ksasl::Result<ClientStep>>;
/// The same for server mechanisms.
pub type ServerHost = Box<dyn FnMut(&HostWork) -> ksasl::Result<MechServerStep>>;

/// METADATA v0 with an empty body: the application request used in the simulations.
pub fn app_request(corr: i32) -> Vec<u8> {
    let mut f = Vec::new();
    f.extend_from_slice(&10i32.to_be_bytes());
    f.extend_from_slice(&3i16.to_be_bytes());
    f.extend_from_slice(&0i16.to_be_bytes());
    f.extend_from_slice(&corr.to_be_bytes());
    f.extend_from_slice(&(-1i16).to_be_bytes());
    f
}

fn app_response(corr: i32) -> Vec<u8> {
    let mut f = Vec::new();
    f.extend_from_slice(&8i32.to_be_bytes());
    f.extend_from_slice(&corr.to_be_bytes());
    f.extend_from_slice(&[0xab; 4]);
    f
}

#[derive(Debug, Default)]
pub struct Stats {
    pub sent: Vec<i32>,
    pub received: Vec<i32>,
    pub authenticated: u32,
    pub reauthenticated: u32,
    pub reauth_failed: u32,
    pub closed_expired: bool,
    pub failed: Option<String>,
    pub server_failed: Option<String>,
    /// How often each side's mechanism answered later.
    pub client_pending: u32,
    pub server_pending: u32,
}

pub struct Pair {
    pub client: ClientConnection,
    pub server: ServerConnection,
    to_server: FrameDecoder,
    to_client: FrameDecoder,
    delayed_app: VecDeque<Vec<u8>>,
    pub held: VecDeque<i32>,
    next_corr: i32,
    pub stats: Stats,
    pub closed: bool,
    /// Finishes client mechanism work, one pump round after it was handed out.
    pub client_host: Option<ClientHost>,
    /// Finishes server mechanism work, one pump round after it was handed out.
    pub server_host: Option<ServerHost>,
    client_work: Option<HostWork>,
    server_work: Option<HostWork>,
}

impl Pair {
    pub fn new(client: Arc<ClientConfig>, server: Arc<ServerConfig>) -> Self {
        Pair {
            client: ClientConnection::new(client),
            server: ServerConnection::new(server),
            to_server: FrameDecoder::new(100 * 1024 * 1024),
            to_client: FrameDecoder::new(100 * 1024 * 1024),
            delayed_app: VecDeque::new(),
            held: VecDeque::new(),
            next_corr: 0,
            stats: Stats::default(),
            closed: false,
            client_host: None,
            server_host: None,
            client_work: None,
            server_work: None,
        }
    }

    /// Starts and runs the initial authentication to completion.
    pub fn connect(&mut self, now: i64) {
        self.client.start(now).unwrap();
        self.pump(now);
    }

    /// The application wants to send a request: sent at once, or held during
    /// re-authentication (a due re-authentication starts here).
    pub fn request(&mut self, now: i64) {
        let corr = self.next_corr;
        self.next_corr += 1;
        self.held.push_back(corr);
        self.flush_held(now);
    }

    fn flush_held(&mut self, now: i64) {
        while let Some(&corr) = self.held.front() {
            match self.client.before_request(now) {
                Ok(true) => {
                    self.held.pop_front();
                    self.stats.sent.push(corr);
                    self.to_server.push(&app_request(corr));
                }
                Ok(false) => break,
                Err(_) => break,
            }
        }
    }

    /// Moves bytes both ways until nothing moves.
    pub fn pump(&mut self, now: i64) {
        for _ in 0..64 {
            if self.closed {
                return;
            }
            let mut moved = false;
            // Work the mechanisms handed out last round is finished now.
            if let Some(work) = self.server_work.take() {
                moved = true;
                let host = self.server_host.as_mut().expect("a server host");
                let r = host(&work);
                let out = self.server.resume(r, now);
                self.server_output(out, now);
                if self.closed {
                    return;
                }
            }
            if let Some(work) = self.client_work.take() {
                moved = true;
                let host = self.client_host.as_mut().expect("a client host");
                let r = host(&work);
                let ev = self.client.resume(r, now);
                if !self.client_event(ev, &[]) {
                    return;
                }
            }
            if let Some(out) = self.client.poll_transmit() {
                self.to_server.push(&out);
                moved = true;
            }
            // The broker answers last round's application requests now.
            let delayed: Vec<Vec<u8>> = self.delayed_app.drain(..).collect();
            for r in delayed {
                self.to_client.push(&r);
                moved = true;
            }
            while let Some(frame) = self.to_server.next_frame().unwrap() {
                moved = true;
                self.server_frame(&frame, now);
                if self.closed {
                    return;
                }
            }
            while let Some(frame) = self.to_client.next_frame().unwrap() {
                moved = true;
                let ev = self.client.handle_frame(&frame, now);
                if !self.client_event(ev, &frame) {
                    return;
                }
            }
            self.flush_held(now);
            if !moved {
                return;
            }
        }
        panic!("the pair did not settle");
    }

    /// Records a client event for `frame` (empty after a resumption); false when the
    /// connection is over.
    fn client_event(&mut self, ev: ClientEvent, frame: &[u8]) -> bool {
        match ev {
            ClientEvent::Continue => {}
            ClientEvent::Application => self
                .stats
                .received
                .push(i32::from_be_bytes([frame[0], frame[1], frame[2], frame[3]])),
            ClientEvent::Authenticated(_) => self.stats.authenticated += 1,
            ClientEvent::Reauthenticated(_) => self.stats.reauthenticated += 1,
            ClientEvent::ReauthenticationFailed { .. } => self.stats.reauth_failed += 1,
            ClientEvent::Pending(work) => {
                assert_eq!(self.client.pending_work(), Some(&work));
                self.stats.client_pending += 1;
                assert!(
                    self.client_work.replace(work).is_none(),
                    "work handed out twice"
                );
            }
            ClientEvent::Failed(e) => {
                self.stats.failed = Some(e.to_string());
                self.closed = true;
                return false;
            }
        }
        true
    }

    fn server_frame(&mut self, frame: &[u8], now: i64) {
        // The gate alone routes every frame (a raw legacy token has no header: -1 stands in).
        let p = RequestPrefix::parse(frame).ok();
        match self.server.gate(p.as_ref().map_or(-1, |p| p.api_key), now) {
            Gate::Process => {
                let corr = p.expect("a request").correlation_id;
                self.delayed_app.push_back(app_response(corr));
                return;
            }
            Gate::CloseExpired => {
                self.stats.closed_expired = true;
                self.closed = true;
                return;
            }
            Gate::Close => {
                self.closed = true;
                return;
            }
            Gate::BeginReauthentication | Gate::NotAuthenticated => {}
        }
        let out = self.server.handle_frame(frame, now);
        self.server_output(out, now);
    }

    fn server_output(&mut self, action: ServerAction, now: i64) {
        self.to_client
            .push(&self.server.poll_transmit().unwrap_or_default());
        match action {
            ServerAction::Continue
            | ServerAction::Authenticated(_)
            | ServerAction::Reauthenticated(_) => {}
            ServerAction::ReauthenticationFailed(_) => {}
            ServerAction::NeedCredential(r) => panic!("unexpected credential request {r:?}"),
            ServerAction::Pending(work) => {
                assert_eq!(self.server.pending_work(), Some(&work));
                self.stats.server_pending += 1;
                assert!(
                    self.server_work.replace(work).is_none(),
                    "work handed out twice"
                );
            }
            ServerAction::FailAt { error, .. } | ServerAction::CloseNow(error) => {
                self.stats.server_failed = Some(error.to_string());
                // The client reads what was written, then sees the connection close.
                while let Ok(Some(f)) = self.to_client.next_frame() {
                    if let ClientEvent::Failed(e) = self.client.handle_frame(&f, now) {
                        self.stats.failed = Some(e.to_string());
                    }
                }
                if self.stats.failed.is_none() {
                    self.stats.failed = Some(self.client.connection_closed(now).to_string());
                }
                self.closed = true;
            }
        }
    }
}
