//! A layout file read from disk: its magic first, so that a path to some other file (a Parquet
//! file of gigabytes, say) is refused at once with the error a whole read would give, instead of
//! being read whole into memory first.

use layout::format::{FormatError, HEADER_BYTES, MAGIC};
use std::io::Read;
use std::path::Path;

#[derive(Debug, thiserror::Error)]
pub enum ReadLayoutError {
    /// The file could not be opened or read.
    #[error("{0}")]
    Io(#[from] std::io::Error),
    /// The file does not start as a layout file does, or its header states another length
    /// than the file has.
    #[error("{0}")]
    NotALayout(FormatError),
}

/// The bytes of the layout file at `path`, once its first bytes are a layout's magic.
pub fn read(path: &Path) -> Result<Vec<u8>, ReadLayoutError> {
    let mut file = std::fs::File::open(path)?;
    let mut bytes = Vec::with_capacity(MAGIC.len());
    // `take` stops at the magic's length: a short file gives what it has.
    (&mut file)
        .take(MAGIC.len() as u64)
        .read_to_end(&mut bytes)?;
    if bytes != MAGIC {
        return Err(ReadLayoutError::NotALayout(FormatError::BadMagic {
            found: bytes,
        }));
    }
    // The header states the stored body's length (bytes 28..36): a file of another length is
    // refused before its body is read (a layout cut to 44 bytes and padded to 300 MB was read
    // whole first). A header cut short is left to the whole read's error.
    (&mut file)
        .take((HEADER_BYTES - MAGIC.len()) as u64)
        .read_to_end(&mut bytes)?;
    if let Some(stated) = bytes
        .get(28..HEADER_BYTES)
        .and_then(|b| <[u8; 8]>::try_from(b).ok())
    {
        let stated = u64::from_le_bytes(stated);
        let actual = file.metadata()?.len().saturating_sub(HEADER_BYTES as u64);
        if stated != actual {
            return Err(ReadLayoutError::NotALayout(FormatError::BodyLength {
                stated,
                actual,
            }));
        }
    }
    file.read_to_end(&mut bytes)?;
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_that_is_not_a_layout_is_refused_by_its_first_bytes() {
        let dir = std::env::temp_dir().join(format!("layout-file-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let other = dir.join("data.parquet");
        std::fs::write(&other, b"PAR1 and then many bytes").unwrap();
        let e = read(&other).unwrap_err();
        assert!(
            matches!(e, ReadLayoutError::NotALayout(FormatError::BadMagic { .. })),
            "{e}"
        );
        // The error a whole read gives, word for word.
        let whole = layout::format::read_table(&std::fs::read(&other).unwrap()).unwrap_err();
        assert_eq!(e.to_string(), whole.to_string());
        let short = dir.join("short");
        std::fs::write(&short, b"RPL").unwrap();
        assert!(matches!(read(&short), Err(ReadLayoutError::NotALayout(_))));
        let layout = dir.join("t.layout");
        let bytes = layout::format::write_table(&layout::Table::default()).unwrap();
        std::fs::write(&layout, &bytes).unwrap();
        assert_eq!(read(&layout).unwrap(), bytes);
        // Padded past its stated length: refused by the header, with the whole read's error.
        let padded = dir.join("padded.layout");
        let mut long = bytes.clone();
        long.extend_from_slice(&[0; 1000]);
        std::fs::write(&padded, &long).unwrap();
        let e = read(&padded).unwrap_err();
        let whole = layout::format::read_table(&long).unwrap_err();
        assert_eq!(e.to_string(), whole.to_string());
        let missing = read(&dir.join("missing.layout")).unwrap_err();
        assert!(matches!(missing, ReadLayoutError::Io(_)), "{missing}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
