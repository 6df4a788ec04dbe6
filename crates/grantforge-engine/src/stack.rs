//! A short list kept on the stack, spilling to the heap only when it grows past `N`: requests name
//! a few levels, groups and roles, and deciding one should not allocate.

pub(crate) struct StackVec<T, const N: usize> {
    inline: [Option<T>; N],
    len: usize,
    spill: Vec<T>,
}

impl<T, const N: usize> StackVec<T, N> {
    pub(crate) fn new() -> Self {
        StackVec {
            inline: std::array::from_fn(|_| None),
            len: 0,
            spill: Vec::new(),
        }
    }

    pub(crate) fn push(&mut self, value: T) {
        if self.len < N {
            self.inline[self.len] = Some(value);
        } else {
            self.spill.push(value);
        }
        self.len += 1;
    }

    pub(crate) fn len(&self) -> usize {
        self.len
    }

    pub(crate) fn iter(&self) -> impl Iterator<Item = &T> + '_ {
        self.inline
            .iter()
            .filter_map(Option::as_ref)
            .chain(self.spill.iter())
    }

    pub(crate) fn get(&self, index: usize) -> Option<&T> {
        if index < N {
            self.inline[index].as_ref()
        } else {
            self.spill.get(index - N)
        }
    }
}

impl<T: PartialEq, const N: usize> StackVec<T, N> {
    /// Pushes unless an equal value is already there.
    pub(crate) fn push_distinct(&mut self, value: T) {
        if !self.iter().any(|v| *v == value) {
            self.push(value);
        }
    }
}

/// One value kept inline, or several in one allocation: most policies have one level, one value
/// per level and one item, and 200,000 of them should not cost 600,000 allocations.
pub(crate) enum OneOrMany<T> {
    One(T),
    Many(Box<[T]>),
}

impl<T> OneOrMany<T> {
    pub(crate) fn from_vec(mut values: Vec<T>) -> Self {
        match values.len() {
            1 => OneOrMany::One(values.pop().expect("one value")),
            _ => OneOrMany::Many(values.into_boxed_slice()),
        }
    }

    pub(crate) fn as_slice(&self) -> &[T] {
        match self {
            OneOrMany::One(value) => std::slice::from_ref(value),
            OneOrMany::Many(values) => values,
        }
    }
}

impl<T: std::fmt::Debug> std::fmt::Debug for OneOrMany<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.as_slice()).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spills_past_its_inline_room() {
        let mut list: StackVec<u32, 2> = StackVec::new();
        for value in [1, 2, 3, 2] {
            list.push_distinct(value);
        }
        assert_eq!(list.len(), 3);
        assert_eq!(list.iter().copied().collect::<Vec<_>>(), [1, 2, 3]);
        assert_eq!(list.get(2), Some(&3));
        assert_eq!(list.get(3), None);
    }

    #[test]
    fn keeps_one_value_inline() {
        assert!(matches!(OneOrMany::from_vec(vec![7]), OneOrMany::One(7)));
        assert_eq!(OneOrMany::from_vec(vec![1, 2]).as_slice(), [1, 2]);
        assert!(OneOrMany::<u8>::from_vec(vec![]).as_slice().is_empty());
    }
}
