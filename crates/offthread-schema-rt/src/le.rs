/// A fixed-size little-endian value the format stores: the integer and float
/// scalars. `bool` is stored as `u8` (0 or 1; readers treat non-zero as true).
pub trait Le: Copy + Default + bytemuck::Pod + PartialEq + core::fmt::Debug {
    /// Encoded size in bytes (also the alignment inside columns).
    const SIZE: usize;
    /// Decodes from exactly `SIZE` bytes.
    fn read_le(bytes: &[u8]) -> Self;
    /// Encodes into exactly `SIZE` bytes.
    fn write_le(self, out: &mut [u8]);
}

macro_rules! impl_le {
    ($($t:ty),*) => {$(
        impl Le for $t {
            const SIZE: usize = core::mem::size_of::<$t>();
            #[inline]
            fn read_le(bytes: &[u8]) -> Self {
                let mut b = [0u8; core::mem::size_of::<$t>()];
                b.copy_from_slice(&bytes[..Self::SIZE]);
                <$t>::from_le_bytes(b)
            }
            #[inline]
            fn write_le(self, out: &mut [u8]) {
                out[..Self::SIZE].copy_from_slice(&self.to_le_bytes());
            }
        }
    )*};
}

impl_le!(u8, u16, u32, u64, i8, i16, i32, i64, f32, f64);
