//! In-place resize of an array within its capacity (Karmem §4.3.1): the count word
//! changes, nothing moves. Shrinking erases the rest of the last 64-byte block the
//! array still uses (so SIMD reads of whole blocks see zeros, not old items); bytes
//! further on are left as they were, as in Karmem. Growing back (never past the
//! capacity the writer reserved) zeroes the items it exposes. Layout:
//! docs/schema-format.md §2.

use crate::{ARRAY_ALIGN, ARRAY_HEADER_SIZE, ReadError, WriteError, align_up};

/// How the items of the array sit after its header.
#[derive(Clone, Copy, Debug)]
pub enum ResizeLayout<'a> {
    /// Scalars or AoS items at the header's data offset, with the header's element size
    /// (an AoS of a newer writer's larger items included).
    Contiguous,
    /// SoA: one column per `(hash, bytes per item)` the schema knows. A column the
    /// schema does not know (a newer writer's) cannot be grown safely: W0010.
    Soa { columns: &'a [(u32, usize)] },
}

/// Why a resize did not happen: the array's header or columns are invalid (R codes), or
/// the count is past the capacity (W0010).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ResizeError {
    Read(ReadError),
    Write(WriteError),
}

impl ResizeError {
    pub fn code(&self) -> &'static str {
        match self {
            Self::Read(e) => e.code(),
            Self::Write(e) => e.code(),
        }
    }
}

impl std::fmt::Display for ResizeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Read(e) => e.fmt(f),
            Self::Write(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for ResizeError {}

impl From<ReadError> for ResizeError {
    fn from(e: ReadError) -> Self {
        Self::Read(e)
    }
}

fn word(buf: &[u8], at: usize) -> Result<u32, ReadError> {
    let b = at
        .checked_add(4)
        .and_then(|end| buf.get(at..end))
        .ok_or(out_of_bounds(at, 4, buf.len()))?;
    Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
}

fn out_of_bounds(offset: usize, len: usize, buf_len: usize) -> ReadError {
    ReadError::OutOfBounds {
        offset: offset as u64,
        len: len as u64,
        buf_len: buf_len as u64,
    }
}

/// Zeroes `[from, to)`, checked against the buffer.
fn clear(buf: &mut [u8], from: usize, to: usize) -> Result<(), ReadError> {
    let len = buf.len();
    buf.get_mut(from..to)
        .ok_or(out_of_bounds(from, to.saturating_sub(from), len))?
        .fill(0);
    Ok(())
}

/// Resizes the array whose offset is stored at byte `slot` of `buf` to `count` items.
pub fn resize_array(
    buf: &mut [u8],
    slot: usize,
    count: usize,
    layout: ResizeLayout<'_>,
) -> Result<(), ResizeError> {
    let header = word(buf, slot)? as usize;
    let beyond = |capacity: usize| {
        ResizeError::Write(WriteError::BeyondCapacity {
            count: count as u64,
            capacity: capacity as u64,
        })
    };
    if header == 0 {
        // An empty array has no header and no room.
        return if count == 0 { Ok(()) } else { Err(beyond(0)) };
    }
    if !header.is_multiple_of(ARRAY_ALIGN) {
        return Err(ReadError::Misaligned {
            offset: header as u64,
            align: ARRAY_ALIGN as u32,
        }
        .into());
    }
    if header + ARRAY_HEADER_SIZE > buf.len() {
        return Err(out_of_bounds(header, ARRAY_HEADER_SIZE, buf.len()).into());
    }
    let old = word(buf, header)? as usize;
    let capacity = word(buf, header + 4)? as usize;
    if old > capacity {
        return Err(ReadError::CountExceedsCapacity {
            count: old as u32,
            capacity: capacity as u32,
        }
        .into());
    }
    if count > capacity {
        return Err(beyond(capacity));
    }
    // (start, bytes per item) of every part that holds items.
    let mut parts = Vec::new();
    match layout {
        ResizeLayout::Contiguous => {
            let item_bytes = word(buf, header + 12)? as usize;
            if item_bytes == 0 {
                return Err(ReadError::BadElementSize {
                    expected: 1,
                    found: 0,
                }
                .into());
            }
            parts.push((word(buf, header + 8)? as usize, item_bytes));
        }
        ResizeLayout::Soa { columns } => {
            let n = word(buf, header + 8)? as usize;
            let table = word(buf, header + 12)? as usize;
            let blocks = table + align_up(n * 4, ARRAY_ALIGN);
            for i in 0..n {
                let hash = word(buf, table + i * 4)?;
                let start = word(buf, blocks + i * 4)? as usize * ARRAY_ALIGN;
                match columns.iter().find(|c| c.0 == hash) {
                    Some(&(_, item_bytes)) => parts.push((start, item_bytes)),
                    None if count > old => return Err(beyond(old)),
                    None => {}
                }
            }
        }
    }
    for (start, item_bytes) in parts {
        // Forged headers: the reserved room must be inside the buffer (no overflow).
        let room = capacity
            .checked_mul(item_bytes)
            .and_then(|n| n.checked_add(ARRAY_ALIGN))
            .and_then(|n| n.checked_add(start))
            .filter(|&end| end - ARRAY_ALIGN <= buf.len());
        if room.is_none() {
            return Err(
                out_of_bounds(start, capacity.saturating_mul(item_bytes), buf.len()).into(),
            );
        }
        let end = start + count * item_bytes;
        if count < old {
            // The rest of the last block, never past the array's own room.
            let block_end = start + align_up(count * item_bytes, ARRAY_ALIGN);
            clear(
                buf,
                end,
                block_end.min(start + capacity * item_bytes).max(end),
            )?;
        } else {
            clear(buf, start + old * item_bytes, end)?;
        }
    }
    buf[header..header + 4].copy_from_slice(&(count as u32).to_le_bytes());
    Ok(())
}
