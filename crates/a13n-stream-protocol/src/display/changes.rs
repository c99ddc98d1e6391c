//! Change tracking: the positions of the items changed since a point, marked in constant time, cleared in time
//! proportional to what was marked (never to how many items there are), and all marked at once after a restore.

/// A set of item positions.
#[derive(Debug, Default)]
pub(super) struct Changes {
    /// One bit per item position.
    bits: Vec<u64>,
    /// The marked positions, each once, in the order they were marked.
    marked: Vec<usize>,
}

impl Changes {
    /// Mark the item at `index`.
    pub(super) fn mark(&mut self, index: usize) {
        let (word, bit) = (index / 64, 1u64 << (index % 64));
        if word >= self.bits.len() {
            self.bits.resize(word + 1, 0);
        }
        if self.bits[word] & bit == 0 {
            self.bits[word] |= bit;
            self.marked.push(index);
        }
    }

    /// Mark the items at `0..len`, when nothing is marked yet (a store just restored).
    pub(super) fn mark_first(&mut self, len: usize) {
        debug_assert!(self.marked.is_empty());
        self.bits = vec![u64::MAX; len / 64];
        if len % 64 != 0 {
            self.bits.push((1u64 << (len % 64)) - 1);
        }
        self.marked = (0..len).collect();
    }

    /// Unmark the item at `index` (in time proportional to how many are marked): whether it was marked.
    pub(super) fn unmark(&mut self, index: usize) -> bool {
        let (word, bit) = (index / 64, 1u64 << (index % 64));
        if self.bits.get(word).is_none_or(|bits| bits & bit == 0) {
            return false;
        }
        self.bits[word] &= !bit;
        self.marked.retain(|&marked| marked != index);
        true
    }

    /// Forget the positions `removed` (ascending), whose items left the store: each position after them moves
    /// down by how many of them were before it (in time proportional to how many are marked, times the log of
    /// how many left, and to the highest position).
    pub(super) fn remove(&mut self, removed: &[usize]) {
        self.marked.retain_mut(|marked| match removed.binary_search(marked) {
            Ok(_) => false,
            Err(before) => {
                *marked -= before;
                true
            }
        });
        self.bits.iter_mut().for_each(|word| *word = 0);
        for &marked in &self.marked {
            self.bits[marked / 64] |= 1u64 << (marked % 64);
        }
    }

    /// The marked positions, in the order they were marked.
    pub(super) fn iter(&self) -> impl Iterator<Item = usize> + '_ {
        self.marked.iter().copied()
    }

    /// Unmark everything.
    pub(super) fn clear(&mut self) {
        for &index in &self.marked {
            // Every bit set in the word belongs to a marked position, so the whole word clears.
            self.bits[index / 64] = 0;
        }
        self.marked.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unmarked_position_leaves_the_others() {
        let mut changes = Changes::default();
        for index in [3, 70, 5] {
            changes.mark(index);
        }
        assert!(changes.unmark(70));
        assert!(!changes.unmark(70));
        assert!(!changes.unmark(9000));
        assert_eq!(changes.iter().collect::<Vec<_>>(), vec![3, 5]);
        changes.mark(70);
        assert_eq!(changes.iter().collect::<Vec<_>>(), vec![3, 5, 70]);
        changes.clear();
        assert_eq!(changes.iter().count(), 0);
    }

    #[test]
    fn a_removed_position_moves_the_later_ones_down() {
        let mut changes = Changes::default();
        for index in [3, 70, 5, 64] {
            changes.mark(index);
        }
        changes.remove(&[5]);
        assert_eq!(changes.iter().collect::<Vec<_>>(), vec![3, 69, 63]);
        // The bits follow the positions: marking a moved one again adds nothing, the old place is free.
        changes.mark(69);
        changes.mark(63);
        assert_eq!(changes.iter().count(), 3);
        changes.mark(70);
        assert_eq!(changes.iter().collect::<Vec<_>>(), vec![3, 69, 63, 70]);
        assert!(changes.unmark(3));
        changes.remove(&[0]);
        assert_eq!(changes.iter().collect::<Vec<_>>(), vec![68, 62, 69]);
        // Several at once: each later position moves down by the removed ones before it.
        changes.remove(&[10, 62, 68]);
        assert_eq!(changes.iter().collect::<Vec<_>>(), vec![66]);
        changes.mark(66);
        changes.mark(0);
        assert_eq!(changes.iter().collect::<Vec<_>>(), vec![66, 0]);
    }

    #[test]
    fn marks_are_kept_once_and_cleared() {
        let mut changes = Changes::default();
        for index in [3, 70, 3, 0, 200, 70] {
            changes.mark(index);
        }
        assert_eq!(changes.iter().collect::<Vec<_>>(), [3, 70, 0, 200]);
        changes.clear();
        assert_eq!(changes.iter().count(), 0);
        changes.mark(70);
        assert_eq!(changes.iter().collect::<Vec<_>>(), [70]);
        changes.clear();
        changes.mark_first(130);
        changes.mark(129);
        changes.mark(130);
        assert_eq!(changes.iter().count(), 131);
        assert!(changes.iter().eq(0..131));
        changes.clear();
        assert!(changes.bits.iter().all(|&word| word == 0));
    }
}
