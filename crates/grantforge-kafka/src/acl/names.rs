//! Strings end to end in one buffer, each named by its index: how the ACL view's blocks and the
//! view itself hold a million names without an allocation for each (or the time to free it).

/// Strings in one buffer, each found by where it ends.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(super) struct Names {
    text: String,
    ends: Vec<usize>,
}

impl Names {
    /// Appends `name`; its index is returned.
    pub(super) fn add(&mut self, name: &str) -> u32 {
        self.text.push_str(name);
        self.ends.push(self.text.len());
        u32::try_from(self.ends.len() - 1).expect("fewer than 2^32 names")
    }

    pub(super) fn get(&self, index: u32) -> &str {
        let index = index as usize;
        let start = index.checked_sub(1).map_or(0, |before| self.ends[before]);
        &self.text[start..self.ends[index]]
    }

    pub(super) fn len(&self) -> usize {
        self.ends.len()
    }

    pub(super) fn shrink_to_fit(&mut self) {
        self.text.shrink_to_fit();
        self.ends.shrink_to_fit();
    }

    /// The bytes held on the heap.
    pub(super) fn heap_bytes(&self) -> usize {
        self.text.capacity() + self.ends.capacity() * std::mem::size_of::<usize>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_name_comes_back_by_its_index_empty_ones_too() {
        let mut names = Names::default();
        let indices: Vec<u32> = ["orders", "", "User:alice"].map(|n| names.add(n)).to_vec();
        assert_eq!(indices, [0, 1, 2]);
        assert_eq!(
            (names.get(0), names.get(1), names.get(2)),
            ("orders", "", "User:alice")
        );
        assert_eq!(names.len(), 3);
    }
}
