//! A guest that imports `echo` and exports `relay`: each call goes to an `echo`
//! exporter through the host (guest-to-guest, docs/guest-abi.md).

#[rustfmt::skip]
#[path = "../../generated/guests_guest.rs"]
pub mod guest;
#[rustfmt::skip]
#[path = "../../generated/guests.rs"]
pub mod schema;

use guest::{echo, relay};
use offthread_guest::Error;
use schema::{Blob, BlobRef};

#[derive(Default)]
pub struct Relay;

impl relay::Relay for Relay {
    fn relay(&mut self, input: BlobRef<'_>) -> Result<Blob, Error> {
        let data = input.data().map_err(Error::read)?;
        let mut forward = data.to_vec();
        forward.reverse();
        let answer = echo::Client.echo(&Blob { data: forward })?;
        let back = BlobRef::from_bytes(answer.bytes()).map_err(Error::read)?;
        let mut data = back.data().map_err(Error::read)?.to_vec();
        data.reverse();
        Ok(Blob { data })
    }
}

offthread_guest::export_guest!(Relay, exports: [relay::Export], imports: [echo::Import]);
