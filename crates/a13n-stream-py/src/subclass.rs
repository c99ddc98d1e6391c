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
    new_of(&cls.py().get_type::<T>(), cls, args, kwargs, placeholder)
}

/// `__new__` of a package class `own` whose instances hold a `T` (`T`'s own class or a package subclass of it):
/// made from the arguments for `own` itself, `placeholder` for a host's subclass.
pub(crate) fn new_of<T: Made>(
    own: &Bound<'_, PyType>,
    cls: &Bound<'_, PyType>,
    args: &Bound<'_, PyTuple>,
    kwargs: Option<&Bound<'_, PyDict>>,
    placeholder: impl Fn() -> T,
) -> PyResult<T> {
    if !cls.is(own) {
        return Ok(placeholder());
    }
    made(own, args, kwargs, placeholder)
}

/// `__init__` of class `T`: nothing for `T` itself (`__new__` made it); for a subclass, made from its arguments.
pub(crate) fn init<T: Made>(
    slf: &Bound<'_, T>,
    args: &Bound<'_, PyTuple>,
    kwargs: Option<&Bound<'_, PyDict>>,
    placeholder: fn() -> T,
) -> PyResult<()> {
    init_of(&slf.py().get_type::<T>(), slf, args, kwargs, placeholder)
}

/// `__init__` of an instance of package class `own` (as [`new_of`]): nothing for `own` itself; for a host's
/// subclass, made from its arguments.
pub(crate) fn init_of<T: Made>(
    own: &Bound<'_, PyType>,
    slf: &Bound<'_, T>,
    args: &Bound<'_, PyTuple>,
    kwargs: Option<&Bound<'_, PyDict>>,
    placeholder: impl Fn() -> T,
) -> PyResult<()> {
    if slf.as_any().get_type().is(own) {
        return Ok(());
    }
    let made = made(own, args, kwargs, placeholder)?;
    *slf.borrow_mut() = made;
    Ok(())
}

/// What `own._make(*args, **kwargs)` makes, taken out of the instance it returns.
fn made<T: Made>(
    own: &Bound<'_, PyType>,
    args: &Bound<'_, PyTuple>,
    kwargs: Option<&Bound<'_, PyDict>>,
    placeholder: impl Fn() -> T,
) -> PyResult<T> {
    let py = own.py();
    let made =
        own.getattr(pyo3::intern!(py, "_make"))?.call(args, kwargs).map_err(|error| as_init(own, kwargs, error))?;
    let made = made.cast_into::<T>()?;
    let mut made = made.borrow_mut();
    Ok(std::mem::replace(&mut *made, placeholder()))
}

/// A `TypeError` of the arguments given to `_make` said of `__init__`, the method a host called, by the name
/// Python gives it (the class that defines it: `HarnessAguiObserver.__init__` for a stream observer), with `self`
/// counted as Python counts it there (`takes 1 positional argument but 2 were given`, and, beside keyword-only
/// arguments, `but 3 positional arguments (and 1 keyword-only argument) were given`).
fn as_init(own: &Bound<'_, PyType>, kwargs: Option<&Bound<'_, PyDict>>, error: PyErr) -> PyErr {
    let py = own.py();
    let message = error.value(py).to_string();
    let Some((_, rest)) = message.split_once("._make() ") else { return error };
    if !error.is_instance_of::<pyo3::exceptions::PyTypeError>(py) {
        return error;
    }
    let qualname = own.getattr("__init__").and_then(|init| init.getattr("__qualname__"));
    let Some(init) = qualname.ok().map(|name| name.to_string()) else { return error };
    let mut words: Vec<String> = rest.split(' ').map(str::to_owned).collect();
    if rest.starts_with("takes ") {
        let mut last = 0;
        for word in &mut words {
            if let Ok(count) = word.parse::<u64>() {
                last = count + 1;
                *word = last.to_string();
            } else if word == "argument" || word == "arguments" {
                *word = plural(last, "argument");
            } else if word == "was" || word == "were" {
                *word = if last == 1 { "was" } else { "were" }.to_owned();
            }
        }
        let (keyword_only, unexpected) = keywords_given(own, kwargs);
        // Python reads the keywords first: an unexpected one is reported before too many positional arguments.
        if let Some(name) = unexpected {
            words = format!("got an unexpected keyword argument '{name}'").split(' ').map(str::to_owned).collect();
        } else if keyword_only > 0 && words.len() >= 2 {
            // `... but 4 were given` becomes `... but 4 positional arguments (and 1 keyword-only argument) were given`.
            let at = words.len() - 2;
            words[at] = format!(
                "{} (and {keyword_only} keyword-only {}) were",
                plural(last, "positional argument"),
                plural(keyword_only, "argument")
            );
        }
    }
    let said = pyo3::exceptions::PyTypeError::new_err(format!("{init}() {}", words.join(" ")));
    said.set_cause(py, Some(error));
    said
}

/// `word`, with an `s` unless `count` is one.
fn plural(count: u64, word: &str) -> String {
    if count == 1 {
        word.to_owned()
    } else {
        format!("{word}s")
    }
}

/// How many of `kwargs` name keyword-only parameters of `own._make`, as Python counts them in its message, and
/// the first that names no parameter.
fn keywords_given(own: &Bound<'_, PyType>, kwargs: Option<&Bound<'_, PyDict>>) -> (u64, Option<String>) {
    let Some(kwargs) = kwargs else { return (0, None) };
    let py = own.py();
    let given = || -> PyResult<(u64, Option<String>)> {
        let inspect = py.import("inspect")?;
        let parameters = inspect.getattr("signature")?.call1((own.getattr("_make")?,))?.getattr("parameters")?;
        let keyword_only = inspect.getattr("Parameter")?.getattr("KEYWORD_ONLY")?;
        let mut count = 0;
        for name in kwargs.keys() {
            match parameters.get_item(&name) {
                Ok(parameter) if parameter.getattr("kind")?.eq(&keyword_only)? => count += 1,
                Ok(_) => {}
                Err(_) => return Ok((count, Some(name.to_string()))),
            }
        }
        Ok((count, None))
    };
    given().unwrap_or((0, None))
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

/// `restore` of package class `own` or a host's subclass of it: `build(restored)` for `own` itself; for a
/// subclass, an instance made by calling the class with `kwargs` (its own constructor runs, as the reference's
/// `restore` runs it), holding `restored`.
pub(crate) fn restored<'py, T: Made>(
    cls: &Bound<'py, PyType>,
    own: &Bound<'py, PyType>,
    kwargs: Bound<'py, PyDict>,
    restored: T,
    build: impl FnOnce(T) -> PyResult<Bound<'py, PyAny>>,
) -> PyResult<Py<PyAny>> {
    if cls.is(own) {
        return Ok(build(restored)?.unbind());
    }
    let instance = cls.call((), Some(&kwargs))?;
    *instance.cast::<T>()?.borrow_mut() = restored;
    Ok(instance.unbind())
}
