//! How the package's classes are made so that a host may subclass them with constructors of its own: the class
//! itself makes its core object in `__new__`, from its `_make` static method (the reference's parameters); a
//! subclass's instance starts as a placeholder and is made in `__init__`, from what the subclass passes to
//! `super().__init__(...)`, whatever its own constructor takes.

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyTuple, PyType};
use pyo3::PyClass;

/// A package class made this way: mutable (its placeholder is replaced in place) and a Python type.
pub(crate) trait Made:
    PyClass<Frozen = pyo3::pyclass::boolean_struct::False> + pyo3::type_object::PyTypeInfo
{
}

impl<T: PyClass<Frozen = pyo3::pyclass::boolean_struct::False> + pyo3::type_object::PyTypeInfo> Made for T {}

/// `__new__` of class `T`: made from the arguments for `T` itself, `placeholder` for a subclass.
pub(crate) fn new<T: Made>(
    cls: &Bound<'_, PyType>,
    args: &Bound<'_, PyTuple>,
    kwargs: Option<&Bound<'_, PyDict>>,
    placeholder: fn() -> T,
) -> PyResult<T> {
    let base = cls.py().get_type::<T>();
    if !cls.is(&base) {
        return Ok(placeholder());
    }
    made(&base, args, kwargs, placeholder)
}

/// `__init__` of class `T`: nothing for `T` itself (`__new__` made it); for a subclass, made from its arguments.
pub(crate) fn init<T: Made>(
    slf: &Bound<'_, T>,
    args: &Bound<'_, PyTuple>,
    kwargs: Option<&Bound<'_, PyDict>>,
    placeholder: fn() -> T,
) -> PyResult<()> {
    let base = slf.py().get_type::<T>();
    if slf.as_any().get_type().is(&base) {
        return Ok(());
    }
    let made = made(&base, args, kwargs, placeholder)?;
    *slf.borrow_mut() = made;
    Ok(())
}

/// What `T._make(*args, **kwargs)` makes, taken out of the instance it returns.
fn made<T: Made>(
    base: &Bound<'_, PyType>,
    args: &Bound<'_, PyTuple>,
    kwargs: Option<&Bound<'_, PyDict>>,
    placeholder: fn() -> T,
) -> PyResult<T> {
    let py = base.py();
    let made = base.getattr(pyo3::intern!(py, "_make"))?.call(args, kwargs).map_err(|error| as_init(py, error))?;
    let made = made.cast_into::<T>()?;
    let mut made = made.borrow_mut();
    Ok(std::mem::replace(&mut *made, placeholder()))
}

/// A `TypeError` of the arguments given to `_make` said of `__init__`, the method a host called, with `self` counted
/// as Python counts it there (`takes 1 positional argument but 2 were given`).
fn as_init(py: Python<'_>, error: PyErr) -> PyErr {
    let message = error.value(py).to_string();
    let Some((class, rest)) = message.split_once("._make() ") else { return error };
    if !error.is_instance_of::<pyo3::exceptions::PyTypeError>(py) {
        return error;
    }
    let mut words: Vec<String> = rest.split(' ').map(str::to_owned).collect();
    if rest.starts_with("takes ") {
        let mut last = 0;
        for word in &mut words {
            if let Ok(count) = word.parse::<u64>() {
                last = count + 1;
                *word = last.to_string();
            } else if word == "argument" || word == "arguments" {
                *word = if last == 1 { "argument" } else { "arguments" }.to_owned();
            } else if word == "was" || word == "were" {
                *word = if last == 1 { "was" } else { "were" }.to_owned();
            }
        }
    }
    let said = pyo3::exceptions::PyTypeError::new_err(format!("{class}.__init__() {}", words.join(" ")));
    said.set_cause(py, Some(error));
    said
}

/// The constructor arguments the reference's `restore` makes a subclass's instance with: the processor given and
/// no event journal.
pub(crate) fn restore_kwargs<'py>(
    py: Python<'py>,
    processor: &Option<Py<PyAny>>,
    json_processor: &Option<Py<PyAny>>,
) -> PyResult<Bound<'py, PyDict>> {
    let kwargs = PyDict::new(py);
    match (processor, json_processor) {
        (_, Some(json_processor)) => kwargs.set_item("json_processor", json_processor)?,
        (processor, None) => kwargs.set_item("processor", processor)?,
    }
    kwargs.set_item("retain_events", false)?;
    Ok(kwargs)
}

/// `restore` of class `T` or a subclass: `restored` itself for `T`; for a subclass, an instance made by calling
/// the class with `kwargs` (its own constructor runs, as the reference's `restore` runs it), holding `restored`.
pub(crate) fn restored<T>(cls: &Bound<'_, PyType>, kwargs: Bound<'_, PyDict>, restored: T) -> PyResult<Py<PyAny>>
where
    T: Made + Into<pyo3::PyClassInitializer<T>>,
{
    let py = cls.py();
    if cls.is(py.get_type::<T>()) {
        return Ok(Bound::new(py, restored)?.into_any().unbind());
    }
    let instance = cls.call((), Some(&kwargs))?;
    *instance.cast::<T>()?.borrow_mut() = restored;
    Ok(instance.unbind())
}
